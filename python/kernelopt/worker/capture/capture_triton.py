"""Capture a standalone Triton file into a bundle (docs/inputs.md).

The file's launcher runs three times on the file's inputs: once to let `@triton.autotune`
choose its configs (on a GPU; the interpreter cannot time, so a CPU capture takes each
autotuner's first config and says so), once traced (synthesize.py records launches and
allocations and writes module_0.py), and the synthesized module once more, which must
reproduce the launcher's outputs, or capture refuses the file.
"""

from __future__ import annotations

import datetime
import time
from pathlib import Path

import torch

from . import capture_common as cap
from .kernel_files import LauncherModel, import_kernel_file, kernel_objects, run_launcher
from .synthesize import SynthesisError, Trace, synthesize_module, trace_launcher


def build_kernel_problem(path: Path, kind: str, seed: int, device: str, dtype: torch.dtype | None):
    """(LauncherModel, inputs) the way build_problem makes an nn.Module problem's: inputs drawn on the
    CPU under seed + 1, cast, moved."""
    if device == "cpu":
        _require_interpreter()
    module, launcher = import_kernel_file(path, kind)
    try:
        cap.seed_all(seed + 1)
        inputs = list(module.get_inputs())
    except Exception as e:
        raise cap.CaptureError(f"get_inputs() failed: {cap.one_line(e)}", "fix get_inputs() in the file") from e
    if not inputs:
        raise cap.CaptureError(f"get_inputs() of {path} returned no inputs", "return the launcher's inputs as a list")
    if dtype is not None:
        inputs = [x.to(dtype) if cap._is_float_tensor(x) else x for x in inputs]
    if device == "cpu" and kind == "triton":
        _first_configs_only(kernel_objects(module))
    if device == "cpu" and kind == "helion":
        _interpreter_libdevice()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    return LauncherModel(module, launcher), inputs


def _require_interpreter() -> None:
    from ..runtime.cpu_runtime import check_interpreter

    try:
        check_interpreter()
    except RuntimeError as e:
        raise cap.CaptureError(f"a kernel file runs on the CPU through Triton's interpreter: {e}",
                               "set TRITON_INTERPRET=1 before triton is imported (`kernelopt capture` does)") from e


def _first_configs_only(kernels: dict) -> None:
    """CPU: each autotuner keeps only its first config (one config is never benchmarked, and the
    interpreter cannot time). The file was imported for this run alone, so this changes no one else's."""
    from triton.runtime.autotuner import Autotuner

    for k in kernels.values():
        while k is not None:
            if isinstance(k, Autotuner) and len(k.configs) > 1:
                k.kernelopt_all_configs = k.configs  # meta.json still lists them all
                k.configs = k.configs[:1]
            k = getattr(k, "fn", None) if hasattr(getattr(k, "fn", None), "run") else None


def _interpreter_libdevice() -> None:
    """CPU: Helion's generated code imports libdevice from Inductor's runtime; the interpreter cannot
    run CUDA's libdevice, so those names become kernelopt's CPU equivalents (as in CPU-mode modules)."""
    import torch._inductor.runtime.triton_compat as compat
    import torch._inductor.runtime.triton_helpers as helpers

    from ..runtime.libdevice_cpu import libdevice

    compat.libdevice = helpers.libdevice = libdevice


def _autotuned_configs(kernels: dict, trace: Trace) -> tuple[dict[int, dict], dict]:
    """Per launch of an autotuned kernel, the chosen config's constexprs; per kernel, the choice."""
    from triton.runtime.autotuner import Autotuner

    per_launch, per_kernel = {}, {}
    for n, launch in enumerate(trace.launches):
        k = kernels[launch.global_name]
        while k is not None and not isinstance(k, Autotuner):
            k = getattr(k, "fn", None) if hasattr(getattr(k, "fn", None), "run") else None
        if k is None:
            continue
        chosen = k.best_config or k.configs[0]
        # num_warps / num_stages belong to the choice too (else the launch takes Triton's defaults).
        per_launch[n] = dict(chosen.kwargs, num_warps=chosen.num_warps, num_stages=chosen.num_stages)
        per_kernel[launch.global_name] = {
            "configs": [dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
                        for c in getattr(k, "kernelopt_all_configs", k.configs)],
            "chosen": dict(chosen.kwargs, num_warps=chosen.num_warps, num_stages=chosen.num_stages),
        }
    return per_launch, per_kernel


def clone_args(xs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def capture_triton(problem_path: Path, out_dir: Path, seed: int, device: str, dtype: str | None,
                   force: bool, started: float) -> dict:
    model, inputs = build_kernel_problem(problem_path, "triton", seed, device, cap.DTYPES.get(dtype))
    module, name = model.file, model.launcher
    kernels = kernel_objects(module)
    fn = getattr(module, name)
    with torch.no_grad():
        run_launcher(fn, clone_args(inputs), problem_path, name)  # autotuning happens here, on copies
        trace = Trace()
        traced_inputs = clone_args(inputs)
        with trace_launcher(module, kernels, trace):
            out = run_launcher(fn, traced_inputs, problem_path, name)
        tuned_launches, tuned_kernels = _autotuned_configs(kernels, trace)
    if not trace.launches:
        raise cap.CaptureError(f"launcher `{name}` in {problem_path} launched no Triton kernel",
                               "launch the file's @triton.jit kernel(s) as kernel[grid](...) inside the launcher")
    outputs = cap._flatten(out)
    if not outputs or not all(isinstance(o, torch.Tensor) for o in outputs):
        raise cap.CaptureError(f"launcher `{name}` returned {type(out).__name__}, not tensors",
                               "return the output tensor(s) (a tensor or a tuple of tensors)")
    props = None
    if device == "cuda":
        from torch._inductor.runtime.hints import DeviceProperties

        props = repr(DeviceProperties.create(torch.device("cuda", torch.cuda.current_device())))
    try:
        source, decls = synthesize_module(problem_path.name, traced_inputs, trace, outputs, tuned_launches, props)
    except SynthesisError as e:
        raise cap.CaptureError(f"launcher `{name}`: {e}", "allocate buffers with torch.empty/zeros/full(_like) "
                               "and pass them to the kernels (docs/inputs.md)") from e
    meta = kernel_bundle_meta(problem_path, name, seed, device, dtype, inputs, outputs, decls, tuned_kernels, module, started)
    return finish(problem_path, out_dir, force, source, meta, model, inputs, device)


def finish(problem_path: Path, out_dir: Path, force: bool, source: str, meta: dict, model, inputs: list,
           device: str) -> dict:
    """Check the synthesized module reproduces the original launcher, then write the bundle."""
    from ..runtime.cpu_runtime import load_module

    with torch.no_grad():
        synthesized = load_module(source, str(out_dir / "module_0.py"), device)
        got = synthesized.call(clone_args(inputs))
        want = model(*clone_args(inputs))
    meta["eager_vs_compiled"] = cap._compare(want, got)
    diff = meta["eager_vs_compiled"]
    if diff["max_abs"] is None or diff["max_rel"] > 1e-3:
        raise cap.CaptureError(
            f"the module synthesized from launcher `{model.launcher}` differs from the launcher ({diff}): it does "
            "work besides allocating buffers and launching kernels",
            "keep only allocations, views and kernel launches in the launcher (docs/inputs.md)")
    meta["capture_seconds"] = round(time.monotonic() - meta.pop("_started"), 3)
    cap._write_bundle(out_dir, force, problem_path, [source], meta)
    return meta


def kernel_bundle_meta(problem_path, launcher, seed, device, dtype, inputs, outputs, decls, tuned, module, started) -> dict:
    args = []
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            args.append({"index": i, "kind": "input", "input_index": i, "shape": list(x.shape),
                         "stride": list(x.stride()), "dtype": cap._dtype_name(x.dtype), "storage_offset": 0})
        else:
            args.append({"index": i, "kind": "scalar", "value": cap._jsonable(x)})
    described = [cap._describe_input(o) for o in outputs]
    for d in decls:
        if d["kernel"] in tuned:
            d["autotune"] = dict(tuned[d["kernel"]], chosen_by="autotune" if device == "cuda" else
                                 "first config (the CPU interpreter cannot time configs)")
    return {
        "format": cap.FORMAT, "format_version": cap.FORMAT_VERSION, "problem": "problem.py",
        "problem_name": problem_path.name, "input_kind": "triton", "launcher": launcher,
        "has_reference": callable(getattr(module, "reference", None)), "kernels": decls,
        "mode": "default", "inductor_config": {}, "seed": seed, "device": device, "dtype": dtype,
        "versions": cap._versions(), "gpu": cap._gpu_info() if device == "cuda" else None,
        "init_inputs": [], "inputs": [cap._describe_input(x) for x in inputs], "outputs": described,
        "graphs": [{"module": "module_0.py", "args": args, "dynamo_sources": [], "outputs": described}],
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "_started": started,
    }
