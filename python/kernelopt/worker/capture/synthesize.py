"""Write the Inductor-style module for a kernel file (docs/inputs.md).

The launcher runs once with every Triton kernel launch and every torch allocation
recorded (trace_launcher); synthesize_module then writes what Inductor writes for
user-defined Triton kernels: each kernel as `async_compile.triton(name, '''source''')`
under `@triton_heuristics.user_autotune(configs=[the launch's config], inductor_meta=
{FixedGrid: the grid passed as three extra launch arguments}, triton_meta={signature,
device, constants, divisibility})`, and a straight-line `call(args)` that allocates the
launcher's buffers and launches the kernels with `.run(..., stream=stream0)`. The
engine's parser, stitcher, gates and the worker's launch recording then work unchanged.

What the launcher does besides allocating and launching (torch ops on the data) is not
recorded: capture checks the module against the launcher and refuses when they differ.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import json
import re
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from .kernel_files import innermost_jit

# H200 properties for kernels captured on a CPU (the interpreter has no device to describe).
_H200 = ("DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, "
         "regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, "
         "warp_size=32)")
_FILLS = {"empty": None, "empty_like": None, "empty_strided": None, "zeros": 0, "zeros_like": 0,
          "ones": 1, "ones_like": 1, "full": "arg", "full_like": "arg"}
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@dataclass
class Launch:
    jit: Any  # the innermost @triton.jit function
    global_name: str  # the kernel's name in the file (what the launcher launched)
    args: dict[str, Any]  # every parameter by name, constexprs included
    options: dict[str, Any]  # num_warps, num_stages, ...
    grid: tuple[int, int, int]


@dataclass
class Trace:
    launches: list[Launch] = field(default_factory=list)
    allocations: list[tuple[torch.Tensor, Any]] = field(default_factory=list)  # (tensor, fill or None)


class _TorchOverlay:
    """The file's `torch` while tracing: allocations are recorded, all else is torch."""

    def __init__(self, trace: Trace):
        self._trace = trace

    def __getattr__(self, name):
        real = getattr(torch, name)
        if name not in _FILLS:
            return real

        def alloc(*args, **kwargs):
            t = real(*args, **kwargs)
            fill = _FILLS[name]
            if fill == "arg":
                fill = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
            self._trace.allocations.append((t, fill))
            return t

        return alloc


def record_launches_of(jit, name: str, trace: Trace, patched: list) -> None:
    """Make `jit.run` record each launch into `trace` (undone by unpatch(patched))."""
    if any(j is jit for j, _ in patched):
        return
    original = jit.run

    def recording_run(*args, grid, warmup=False, **kwargs):
        if warmup:  # a compile without a launch (Helion does this to size its grid)
            return original(*args, grid=grid, warmup=warmup, **kwargs)
        params = inspect.signature(jit.fn).parameters
        bound = inspect.signature(jit.fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
        bound.apply_defaults()
        values = dict(bound.arguments)
        g = grid(dict(values, **kwargs)) if callable(grid) else grid
        g = tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))
        options = {k: kwargs[k] for k in _LAUNCH_OPTIONS if k in kwargs}
        trace.launches.append(Launch(jit, name, values, options, (g + (1, 1, 1))[:3]))
        return original(*args, grid=grid, warmup=warmup, **kwargs)

    jit.run = recording_run
    patched.append((jit, original))


def unpatch(patched: list) -> None:
    for jit, _ in patched:
        del jit.run  # the class's run again


@contextlib.contextmanager
def trace_launcher(module, kernels: dict[str, Any], trace: Trace, patched: list | None = None):
    """Record every launch of `kernels` (global name -> kernel object) and every torch allocation
    the file makes while the block runs; `patched` collects kernels patched later (Helion's)."""
    saved_torch = vars(module).get("torch")
    patched = [] if patched is None else patched
    for name, kernel in kernels.items():
        record_launches_of(innermost_jit(kernel), name, trace, patched)
    if saved_torch is torch:
        module.torch = _TorchOverlay(trace)
    try:
        yield trace
    finally:
        unpatch(patched)
        if saved_torch is torch:
            module.torch = saved_torch


# ---------------------------------------------------------------- kernel source


def _def_source(fn) -> str:
    """The function's source from `def` on (decorators dropped), dedented."""
    src = textwrap.dedent(inspect.getsource(fn))
    lines = src.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def "):
            return "".join(lines[i:])
    raise ValueError(f"no def in the source of {fn}")


def kernel_closure_source(jit) -> str:
    """The kernel's source with the @triton.jit helpers and constant globals it reaches, as
    Inductor's user_defined_triton_kernel_transitive_closure_source_code collects them."""
    from triton.runtime.jit import KernelInterface
    from triton.language import constexpr

    parts = [_def_source(jit.fn)]
    included = {jit.fn.__name__}
    renames: dict[str, str] = {}  # "helpers.fn" -> "helpers__fn"

    def include_module_helpers(fn, name: str, module) -> None:
        # Helpers reached as `module.fn(...)` (Helion's generated code calls helion.runtime.triton.helpers
        # this way): each becomes a local @triton.jit function and the call sites are renamed, so the
        # kernel imports nothing beyond triton and Inductor's runtime (G1).
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
                helper = getattr(module, node.attr, None)
                local = f"{name}__{node.attr}"
                if isinstance(helper, KernelInterface) and inspect.isfunction(getattr(helper, "fn", None)) \
                        and local not in included:
                    included.add(local)
                    renames[f"{name}.{node.attr}"] = local
                    parts.append("@triton.jit\n" + _def_source(helper.fn).replace(
                        f"def {helper.fn.__name__}(", f"def {local}(", 1))
                    traverse(helper.fn)

    def traverse(fn):
        for name in fn.__code__.co_names:
            if name in included or name not in fn.__globals__:
                continue
            symbol = fn.__globals__[name]
            if isinstance(symbol, types.ModuleType) and not symbol.__name__.startswith(("triton", "torch", "math")):
                include_module_helpers(fn, name, symbol)
            elif isinstance(symbol, KernelInterface) and hasattr(symbol, "fn") and inspect.isfunction(symbol.fn):
                included.add(name)
                parts.append("@triton.jit\n" + _def_source(symbol.fn))
                traverse(symbol.fn)
            elif isinstance(symbol, constexpr):
                included.add(name)
                parts.append(f"{name} = tl.constexpr({symbol.value!r})\n")
            elif isinstance(symbol, (bool, int, float)) and not isinstance(symbol, torch.dtype):
                included.add(name)
                parts.append(f"{name} = {symbol!r}\n")

    traverse(jit.fn)
    text = "\n".join(parts)
    for dotted, local in renames.items():
        text = re.sub(rf"\b{re.escape(dotted)}\b", local, text)
    return text


_PREAMBLE = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()
"""


def _triton_type(value: Any) -> str:
    from torch._inductor.codegen.triton_utils import _type_of

    if isinstance(value, torch.Tensor):
        return _type_of(value.dtype)
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -2**31 <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"unsupported kernel argument {type(value).__name__}")


def _inductor_meta_common() -> dict:
    """What Inductor adds to every kernel's inductor_meta (backend hash, cache switches); it needs a
    GPU driver, so a CPU capture goes without (the interpreter's launcher reads none of it)."""
    try:
        from torch._inductor.codegen.triton import TritonKernel

        return dict(TritonKernel.inductor_meta_common())
    except Exception:
        return {}


def constexpr_names(jit) -> list[str]:
    """The kernel's tl.constexpr parameters (JITFunction and the interpreter's function alike)."""
    from triton.runtime.jit import _normalize_ty

    return [p.name for p in inspect.signature(jit.fn).parameters.values()
            if _normalize_ty(p.annotation) == "constexpr"]


def kernel_decl(var: str, launch: Launch, config: dict, device_props: str) -> tuple[str, list[str]]:
    """(`var = async_compile.triton(...)` text, names of the runtime (non-constexpr) parameters)."""
    jit = launch.jit
    params = list(inspect.signature(jit.fn).parameters.values())
    constexprs = constexpr_names(jit)
    signature, constants, divisible, runtime = {}, {}, {}, []
    no_specialize = {kp.name for kp in getattr(jit, "params", ()) if getattr(kp, "do_not_specialize", False)}
    for i, p in enumerate(params):
        value = launch.args.get(p.name)
        if p.name in constexprs:
            signature[p.name] = "constexpr"
            if p.name not in config:
                constants[p.name] = value
        elif value is None:
            signature[p.name] = "constexpr"  # Triton specializes None arguments, as Inductor declares them
            constants[p.name] = None
            runtime.append(p.name)
        elif _equal_to_1(value) and p.name not in no_specialize:
            # Triton's JIT specializes an integer equal to 1 (a unit stride) into a constant, which
            # lets it prove loads contiguous and vectorize them; with unit strides declared as plain
            # i32 the captured tiled matmul ran 5.8x slower than the original launcher on the H200.
            # Declared as Inductor does: a constexpr in the signature, a constant, still passed.
            signature[p.name] = "constexpr"
            constants[p.name] = 1
            runtime.append(p.name)
        else:
            signature[p.name] = _triton_type(value)
            runtime.append(p.name)
            # Triton's JIT specializes 16-divisible pointers and integers; so does the declaration.
            if (isinstance(value, torch.Tensor) and value.data_ptr() % 16 == 0) or \
                    (isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0):
                divisible[(i,)] = [["tt.divisibility", 16]]
    inductor_meta = {"grid_type": "FixedGrid", "fixed_grid": ["_grid_0", "_grid_1", "_grid_2"],
                     "extra_launcher_args": ["_grid_0", "_grid_1", "_grid_2"], "kernel_name": var,
                     "declared_constexpr_names": constexprs, **_inductor_meta_common()}
    triton_meta = (f"{{'signature': {signature!r}, 'device': {device_props}, 'constants': {constants!r}, "
                   f"'configs': [{divisible!r}]}}")
    source = kernel_closure_source(jit).replace(f"def {jit.fn.__name__}(", f"def {var}(", 1)
    source = source.replace("\\", "\\\\").replace("'''", "\\'\\'\\'")
    text = (f"{var} = async_compile.triton({var!r}, '''{_PREAMBLE}\n"
            f"@triton_heuristics.user_autotune(\n    configs=[{config!r}],\n    inductor_meta={inductor_meta!r},\n"
            f"    triton_meta={triton_meta},\n    filename=__file__,\n    custom_kernel=True,\n)\n"
            f"@triton.jit\n{source.rstrip()}\n''', device_str='cuda')\n")
    return text, runtime


# ---------------------------------------------------------------- the module


_HEADER = """# Kernel file: {origin} (synthesized by kernelopt capture, docs/inputs.md)
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
async_compile = AsyncCompile()

"""


class SynthesisError(Exception):
    pass


def _equal_to_1(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 1


def launch_config(launch: Launch, autotuned: dict | None) -> dict:
    """The launch's config as Inductor writes it: the autotuner's chosen constexprs (if any), then
    num_warps / num_stages as the launch used them (Triton's defaults when the launcher gave none)."""
    config = dict(autotuned or {})
    config.setdefault("num_warps", launch.options.get("num_warps", 4))
    config.setdefault("num_stages", launch.options.get("num_stages", 3))
    return config


def synthesize_module(origin: str, inputs: list, trace: Trace, outputs: list, autotuned: dict[int, dict],
                      device_props: str | None) -> tuple[str, list[dict]]:
    """(module source, one record per kernel declaration). `autotuned`: launch index -> the
    constexpr values the autotuner chose for it."""
    device_props = device_props or _H200
    names: dict[int, tuple[str, torch.Tensor]] = {}  # storage address -> (name, base tensor)
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            names.setdefault(x.untyped_storage().data_ptr(), (f"arg{i}_1", x))
    allocs = {t.untyped_storage().data_ptr(): (t, fill) for t, fill in trace.allocations}
    body, emitted_bufs = [], []

    def expr(t: torch.Tensor, what: str) -> str:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in names:
            if ptr not in allocs:
                raise SynthesisError(f"{what} is a tensor the launcher made with something other than "
                                     f"torch.empty/zeros/ones/full(_like)")
            base, fill = allocs[ptr]
            name = f"buf{len(emitted_bufs)}"
            emitted_bufs.append(name)
            body.append(f"{name} = empty_strided_cuda({tuple(base.shape)!r}, {tuple(base.stride())!r}, {base.dtype})")
            if fill is not None:
                body.append(f"{name}.fill_({fill!r})")
            names[ptr] = (name, base)
        name, base = names[ptr]
        if t.dtype != base.dtype:
            raise SynthesisError(f"{what} views a {base.dtype} buffer as {t.dtype}; launch on the buffer itself")
        if (t.shape, t.stride(), t.storage_offset()) == (base.shape, base.stride(), base.storage_offset()):
            return name
        return (f"reinterpret_tensor({name}, {tuple(t.shape)!r}, {tuple(t.stride())!r}, "
                f"{t.storage_offset() - base.storage_offset()})")

    decls, records, seen = [], [], {}
    body.append("stream0 = get_raw_stream(0)")
    for n, launch in enumerate(trace.launches):
        config = launch_config(launch, autotuned.get(n))
        key = (id(launch.jit), json.dumps(config, sort_keys=True, default=repr),
               repr({k: v for k, v in launch.args.items() if k not in config and not isinstance(v, torch.Tensor)
                     and k in constexpr_names(launch.jit)}))
        if key not in seen:
            # Named like Inductor's kernels (triton_...), numbered like its user kernels.
            var = f"triton_{launch.jit.fn.__name__.lstrip('_')}_{len(seen)}"
            text, runtime = kernel_decl(var, launch, config, device_props)
            seen[key] = (var, runtime)
            decls.append(text)
            records.append({"variable": var, "kernel": launch.global_name, "config": config})
        var, runtime = seen[key]
        args = []
        for p in runtime:
            v = launch.args[p]
            args.append(expr(v, f"argument {p} of {launch.global_name}") if isinstance(v, torch.Tensor) else repr(v))
        body.append(f"{var}.run({', '.join(args + [str(g) for g in launch.grid])}, stream=stream0)")
    returned = [expr(o, f"output {i} of the launcher") for i, o in enumerate(outputs)]
    in_names = [f"arg{i}_1" for i in range(len(inputs))]
    lines = ["def call(args):", f"    {', '.join(in_names)}{',' if len(in_names) == 1 else ''} = args", "    args.clear()"]
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            lines.append(f"    assert_size_stride(arg{i}_1, {tuple(x.shape)!r}, {tuple(x.stride())!r})")
    lines.append("    with torch.cuda._DeviceGuard(0):")
    lines.append("        torch.cuda.set_device(0)")
    lines += [f"        {b}" for b in body]
    lines.append(f"    return ({''.join(r + ', ' for r in returned)})")
    source = (_HEADER.format(origin=origin) + "\n".join(decls) + "\n\nasync_compile.wait(globals())\n"
              "del async_compile\n\n" + "\n".join(lines) + "\n")
    return source, records
