"""Load a module Inductor generated for a GPU and run it on the CPU (docs/cpu_mode.md).

    module = load_module(source, path, device="cpu")
    outputs = module.call([...])

The module text is never edited. It runs in a namespace whose `__import__`
hands out CPU stand-ins for the few CUDA-only names it uses; every name a
module or kernel can reach is reached through an import (or through the `torch`
the module imported), so overlaying those imports is the whole shim:

- `torch`, `torch.cuda`, `torch._C`, ... are overlays: the real module with a
  few attributes replaced (get_raw_stream -> 0, _empty_strided_cuda -> a CPU
  allocation, torch.cuda._DeviceGuard / set_device -> no-ops,
  device(type='cuda') -> cpu) and everything else delegated to the real one.
- `AsyncCompile` is CpuAsyncCompile: `.triton(name, src)` execs the kernel
  source (again through the hooked import) under Triton's interpreter and
  returns a Launcher; nothing is sent to compile workers.
- Kernels importing from `torch._inductor.runtime` get a private copy of the
  real triton_helpers (set_driver_to_gpu/cpu no-ops, libdevice = libdevice_cpu,
  reductions vectorized by reductions_cpu)
  and a triton_heuristics whose decorators make Launchers (launcher.py).

Overriding names after the module's top level has run would not be enough:
`from torch._C import _cuda_getCurrentRawStream` fails outright on a CPU build
of torch, and `torch.cuda.set_device` is looked up inside call().
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import hashlib
import importlib.util
import itertools
import linecache
import types
import warnings
from typing import Any

import numpy as np
import torch

from . import launcher as launcher_mod
from . import reductions_cpu, scans_cpu
from .libdevice_cpu import libdevice as cpu_libdevice

_module_ids = itertools.count()


def load_module(source: str, path: str, device: str, configs: dict[str, dict] | None = None) -> types.ModuleType:
    """Execute an Inductor output module; device "cpu" runs it through the CPU shims.

    Device "cuda" is the real Inductor runtime (PyCodeCache.load). On the CPU, `path`
    names the module in tracebacks (and is its `__file__`), and `configs` pins the launch
    config of kernels by the name given to async_compile.triton.
    """
    if device.startswith("cuda"):
        from torch._inductor.codecache import PyCodeCache

        return PyCodeCache.load(source)
    if device != "cpu":
        raise ValueError(f"unknown device {device!r}; use 'cpu' or 'cuda'")
    check_interpreter()
    module = types.ModuleType(f"kernelopt_cpu_module_{next(_module_ids)}")
    module.__file__ = path
    module.__dict__["__builtins__"] = _builtins_with_import(_cpu_torch(configs or {}))
    # compile_threads=1: an AsyncCompile that a CPU-captured module uses for its C++
    # kernels compiles in this process instead of starting a worker pool.
    with torch._inductor.config.patch(compile_threads=1):
        exec(_compile(source, path), module.__dict__)
    return module


def load_kernel(kernel_name: str, source: str, device: str, config: dict | None = None):
    """One kernel from its source (the text a module passes to async_compile.triton), to run alone.

    CPU: an interpreter Launcher, pinned to `config` if given. CUDA without a config:
    Inductor's own kernel object (CachingAutotuner, autotuning as in the module). CUDA
    with a config: a Launcher over the compiled @triton.jit function, launched with that
    config and the grid Inductor would compute (docs/design.md, "Known mechanics": a pinned
    config launches the raw @triton.jit function), since Inductor's object would autotune over
    its own configs.
    """
    if device == "cpu":
        check_interpreter()
        return CpuAsyncCompile(_cpu_torch({}), {kernel_name: config} if config else {}).triton(kernel_name, source)
    from torch._inductor.async_compile import AsyncCompile

    if config is None:
        kernel = AsyncCompile().triton(kernel_name, source, device_str=device)
        # Once Inductor's compile pool is warm, async_compile hands back a future (a module's
        # `async_compile.wait(globals())` resolves those); resolve it here.
        return kernel.result() if not hasattr(kernel, "run") and hasattr(kernel, "result") else kernel
    import torch._inductor.runtime as runtime
    import torch._inductor.runtime.triton_heuristics as triton_heuristics

    # Only the decorators change: real triton_helpers and libdevice, compiled by Triton.
    gpu_torch = _Overlay(torch, {"_inductor": _Overlay(torch._inductor, {"runtime": _Overlay(runtime, {
        "triton_heuristics": _Overlay(triton_heuristics, launcher_mod.heuristics_decorators()),
    })})})
    namespace = {"__name__": f"kernelopt_kernel.{kernel_name}", "__file__": f"{kernel_name}.py"}
    namespace["__builtins__"] = _builtins_with_import(gpu_torch)
    exec(_compile(source, f"<kernelopt {kernel_name}>"), namespace)
    launcher = namespace[kernel_name]
    launcher.config = config
    return launcher


def check_interpreter() -> None:
    # @triton.jit picks compiled or interpreted when it decorates, and triton.language
    # decorates its own helpers (tl.sum, tl.max, ...) when triton is first imported: a
    # process that imported triton without TRITON_INTERPRET=1 cannot interpret kernels.
    from triton.runtime.interpreter import InterpretedFunction
    import triton.language as tl

    if not isinstance(tl.sum, InterpretedFunction):
        raise RuntimeError(
            "CPU mode needs Triton's interpreter: set TRITON_INTERPRET=1 in the environment "
            "before triton is first imported (before importing torch._inductor or kernelopt.worker)"
        )
    # Triton 3.6's interpreter turns kernel scalars (1-element arrays) into Python ints
    # with int(array), e.g. in `range(0, r0_numel, R0_BLOCK)`; numpy >= 2.4 refuses that.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # numpy < 2.4 warns, and works
            int(np.ones(1, dtype=np.int32))
    except TypeError:
        raise RuntimeError(
            f"Triton's interpreter does not work with numpy {np.__version__}: install numpy<2.4"
        ) from None


class CpuAsyncCompile:
    """AsyncCompile for CPU mode: Triton kernels become interpreter Launchers, synchronously."""

    def __init__(self, cpu_torch: _Overlay, pins: dict[str, dict]):
        self._cpu_torch = cpu_torch
        self._pins = pins
        self._real = None  # a real AsyncCompile, made only if the module asks for C++ kernels

    def triton(self, kernel_name: str, source_code: str, device_str: str = "cuda") -> launcher_mod.Launcher:
        scans_cpu.install()  # tl.associative_scan / tl.reduce with jit combine functions, vectorized
        namespace = {"__name__": f"kernelopt_cpu_kernel.{kernel_name}", "__file__": f"{kernel_name}.py"}
        namespace["__builtins__"] = _builtins_with_import(self._cpu_torch)
        exec(_compile(source_code, f"<kernelopt-cpu {kernel_name}>"), namespace)
        launcher = namespace[kernel_name]
        if not isinstance(launcher, launcher_mod.Launcher):
            raise TypeError(f"kernel {kernel_name}: expected a triton_heuristics-decorated function, got {launcher!r}")
        launcher.config = self._pins.get(kernel_name)
        return launcher

    def wait(self, scope: dict[str, Any]) -> None:
        if self._real is not None:
            self._real.wait(scope)

    def __getattr__(self, name: str):
        # cpp_pybinding and friends (a bundle captured on the CPU holds C++ kernels).
        if self._real is None:
            from torch._inductor.async_compile import AsyncCompile

            self._real = AsyncCompile()
        return getattr(self._real, name)


def _compile(source: str, filename: str):
    # Triton reads kernel sources back with inspect.getsource, and tracebacks show lines:
    # register the text under its name, as if the file existed.
    if filename.startswith("<"):
        filename = f"{filename[:-1]} {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return compile(source, filename, "exec", dont_inherit=True)


# ---------------------------------------------------------------- the overlays


class _Overlay(types.ModuleType):
    """A module that is `real` except for the attributes in `overrides`."""

    def __init__(self, real: types.ModuleType, overrides: dict[str, Any]):
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(overrides)  # found by normal lookup, before __getattr__
        self.__dict__["_overlay_real"] = real

    def __getattr__(self, name: str):
        return getattr(self.__dict__["_overlay_real"], name)


class _DeviceMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, torch.device)


class cpu_device(metaclass=_DeviceMeta):
    """torch.device, except that CUDA devices become the CPU (isinstance still works)."""

    def __new__(cls, type_or_str: Any = None, index: int | None = None, *, type: str | None = None):
        d = torch.device(type if type is not None else type_or_str, index)
        return torch.device("cpu") if d.type == "cuda" else d


def _empty_strided_cpu(size, stride, dtype, *_device):
    return torch.empty_strided(size, stride, dtype=dtype, device="cpu")


def _cpu_torch(pins: dict[str, dict]) -> _Overlay:
    """The `torch` one module (and its kernels) sees in CPU mode; `pins` go to its AsyncCompile."""
    import torch._inductor.async_compile as async_compile
    import torch._inductor.runtime as runtime
    import torch._inductor.runtime.triton_compat as triton_compat
    import torch._inductor.runtime.triton_heuristics as triton_heuristics

    runtime_overlay = _Overlay(runtime, {
        "triton_helpers": _interpreter_triton_helpers(),
        # Decorators replaced; the rest (start_graph, end_graph, which modules import) delegated.
        "triton_heuristics": _Overlay(triton_heuristics, launcher_mod.heuristics_decorators()),
        "triton_compat": _Overlay(triton_compat, {"libdevice": cpu_libdevice}),
    })
    guards = torch._C._dynamo.guards
    cpu = _Overlay(torch, {
        "device": cpu_device,
        "cuda": _Overlay(torch.cuda, {
            "_DeviceGuard": lambda index: contextlib.nullcontext(),
            "set_device": lambda device: None,
            "synchronize": lambda device=None: None,
            "current_device": lambda: 0,
        }),
        "_C": _Overlay(torch._C, {
            "_cuda_getCurrentRawStream": lambda device: 0,
            "_dynamo": _Overlay(torch._C._dynamo, {
                "guards": _Overlay(guards, {"_empty_strided_cuda": _empty_strided_cpu}),
            }),
        }),
        "_inductor": _Overlay(torch._inductor, {
            "runtime": runtime_overlay,
            "async_compile": _Overlay(async_compile, {"AsyncCompile": lambda: CpuAsyncCompile(cpu, pins)}),
        }),
    })
    return cpu


@functools.cache
def _interpreter_triton_helpers() -> types.ModuleType:
    """A private copy of Inductor's triton_helpers for the interpreter.

    Its @triton.jit helpers (exp, frexp, online_softmax_reduce, ...) look `libdevice` and
    each other up in their own module's globals, so a copy loaded from the same file gets
    libdevice_cpu and the vectorized reductions of reductions_cpu; the real module, which
    other code in the process may use, is untouched.
    """
    import torch._inductor.runtime.triton_helpers as real

    spec = importlib.util.spec_from_file_location(
        "torch._inductor.runtime.kernelopt_cpu_triton_helpers", real.__file__,
        submodule_search_locations=None,
    )
    helpers = importlib.util.module_from_spec(spec)
    helpers.__package__ = "torch._inductor.runtime"  # its relative imports resolve to the real package
    spec.loader.exec_module(helpers)
    # The interpreter is the driver here (kernels call set_driver_to_cpu when Inductor's
    # CPU backend is Triton).
    helpers.set_driver_to_gpu = helpers.set_driver_to_cpu = lambda: None
    helpers.libdevice = cpu_libdevice  # helpers such as frexp and exp call libdevice
    # tl.reduce with a helper's combine function runs per element in the interpreter.
    for name, fast in reductions_cpu.HELPERS.items():
        setattr(helpers, name, fast)
    return helpers


def _builtins_with_import(cpu_torch: _Overlay) -> dict[str, Any]:
    real_import = builtins.__import__

    def cpu_import(name, globals=None, locals=None, fromlist=(), level=0):
        module = real_import(name, globals, locals, fromlist, level)
        if level != 0 or not (name == "torch" or name.startswith("torch.")):
            return module
        if not fromlist:
            return cpu_torch  # `import torch.x.y` binds the top-level name `torch`
        target = cpu_torch
        for part in name.split(".")[1:]:
            target = getattr(target, part)
        return target

    return {**vars(builtins), "__import__": cpu_import}
