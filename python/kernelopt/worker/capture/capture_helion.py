"""Capture a Helion kernel file into a bundle (docs/inputs.md).

Each `@helion.kernel` the launcher calls is bound to its arguments and given one config:
the kernel's own (config=, or the best of configs= as Helion picks it), a full Helion
autotune when KERNELOPT_HELION_AUTOTUNE=1, else Helion's default config. Helion's
generated Triton code for that config (`bound.to_triton_code(config)`) is written to a
file and imported; its host function replaces the Helion kernel for the traced run, so
its launches are recorded exactly like a standalone Triton file's (synthesize.py). The
reference ("the eager model") stays the Helion kernel's own output.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import tempfile
from pathlib import Path

import torch

from . import capture_common as cap
from .capture_triton import clone_args, kernel_bundle_meta, build_kernel_problem, finish
from .kernel_files import helion_kernels, run_launcher
from .synthesize import SynthesisError, Trace, _TorchOverlay, record_launches_of, synthesize_module, unpatch


def choose_config(kernel, bound, args: list, device: str) -> tuple[object, str]:
    """(config, how it was chosen) for one bound Helion kernel."""
    configs = list(getattr(kernel, "configs", []) or [])
    if len(configs) == 1:
        return configs[0], "the kernel's config="
    if configs and device == "cuda":
        return bound.autotune(args, force=False), "Helion's pick among the kernel's configs="
    if configs:
        return configs[0], "the first of configs= (the CPU interpreter cannot time configs)"
    if os.environ.get("KERNELOPT_HELION_AUTOTUNE") == "1" and device == "cuda":
        return bound.autotune(args), "Helion autotune (KERNELOPT_HELION_AUTOTUNE=1)"
    return bound.config_spec.default_config(), "Helion's default config"


class _Generated:
    """Stands in for a @helion.kernel while tracing: runs Helion's generated host code for the
    chosen config (whose Triton launches are recorded), and keeps what was generated."""

    def __init__(self, name: str, kernel, device: str, trace: Trace, patched: list, workdir: Path):
        self.name, self.kernel, self.device = name, kernel, device
        self.trace, self.patched, self.workdir = trace, patched, workdir
        self.records: list[dict] = []

    def __call__(self, *args):
        bound = self.kernel.bind(args)
        config, how = choose_config(self.kernel, bound, list(args), self.device)
        bound.set_config(config)  # the reference (the Helion kernel itself) runs this config, never retunes
        code = bound.to_triton_code(config)
        path = self.workdir / f"helion_{self.name}_{hashlib.sha1(code.encode()).hexdigest()[:10]}.py"
        path.write_text(code, encoding="utf-8")
        generated = cap.import_file(path)  # a real file: Triton reads kernel sources back
        generated.torch = _TorchOverlay(self.trace)
        from triton.runtime.jit import KernelInterface

        for var, obj in vars(generated).items():
            if isinstance(obj, KernelInterface) and var.startswith("_helion_"):
                record_launches_of(obj, var, self.trace, self.patched)
        self.records.append({"kernel": self.name, "config": dict(config), "chosen_by": how,
                             "generated": path.name})
        host = getattr(generated, self.kernel.fn.__name__)
        return host(*args)


def capture_helion(problem_path: Path, out_dir: Path, seed: int, device: str, dtype: str | None,
                   force: bool, started: float) -> dict:
    model, inputs = build_kernel_problem(problem_path, "helion", seed, device, cap.DTYPES.get(dtype))
    module, name = model.file, model.launcher
    launcher = getattr(module, name)
    trace, patched = Trace(), []
    with tempfile.TemporaryDirectory(prefix="kernelopt-helion-") as work, torch.no_grad():
        stand_ins = {k: _Generated(k, v, device, trace, patched, Path(work)) for k, v in helion_kernels(module).items()}
        saved = {k: getattr(module, k) for k in stand_ins}
        saved_torch = None  # Helion parses its kernels with the file's globals: the file's torch stays real
        traced_inputs = clone_args(inputs)
        try:
            for k, g in stand_ins.items():
                setattr(module, k, g)
            if saved_torch is torch:
                module.torch = _TorchOverlay(trace)
            fn = stand_ins[name] if name in stand_ins else launcher
            out = run_launcher(fn, traced_inputs, problem_path, name)
        finally:
            unpatch(patched)
            for k, v in saved.items():
                setattr(module, k, v)
            if saved_torch is torch:
                module.torch = saved_torch
        if not trace.launches:
            raise cap.CaptureError(f"launcher `{name}` in {problem_path} ran no Helion kernel",
                                   "call the file's @helion.kernel from the launcher")
        outputs = cap._flatten(out)
        if not outputs or not all(isinstance(o, torch.Tensor) for o in outputs):
            raise cap.CaptureError(f"launcher `{name}` returned {type(out).__name__}, not tensors",
                                   "return the output tensor(s)")
        props = None
        if device == "cuda":
            from torch._inductor.runtime.hints import DeviceProperties

            props = repr(DeviceProperties.create(torch.device("cuda", torch.cuda.current_device())))
        try:
            source, decls = synthesize_module(problem_path.name, traced_inputs, trace, outputs, {}, props)
        except SynthesisError as e:
            raise cap.CaptureError(f"launcher `{name}`: {e}", "let the Helion kernel allocate its outputs "
                                   "(docs/inputs.md)") from e
    meta = kernel_bundle_meta(problem_path, name, seed, device, dtype, inputs, outputs, decls, {}, module, started)
    meta["input_kind"] = "helion"
    meta["helion"] = {"version": _helion_version(), "kernels": [r for g in stand_ins.values() for r in g.records]}
    meta["created"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return finish(problem_path, out_dir, force, source, meta, model, inputs, device)


def pin_recorded_configs(model, inputs: list, meta: dict) -> None:
    """Bind each Helion kernel the launcher calls directly on the inputs to the config capture recorded,
    so the reference runs what the baseline was generated from (and no autotuning starts in a worker)."""
    import helion

    for rec in meta.get("helion", {}).get("kernels", []):
        kernel = getattr(model.file, rec["kernel"], None)
        if kernel is not None and rec["kernel"] == model.launcher:
            kernel.bind(tuple(inputs)).set_config(helion.Config(**rec["config"]))


def _helion_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helion")
    except PackageNotFoundError:
        return None
