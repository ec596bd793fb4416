"""Capture: run a problem through torch.compile (Inductor) and write an artifact bundle.

    python -m kernelopt.worker.capture PROBLEM.py --out BUNDLE [--mode default]
        [--seed 0] [--device cuda|cpu] [--dtype float32|bfloat16|float16] [--force]

The bundle (format in docs/bundle.md) holds the problem file, the exact source of
every module Inductor generated (module_0.py, module_1.py, ... one per graph, in
order of first execution) and meta.json, which says what each argument of each
module's call() is: a model parameter/buffer, a forward input, an intermediate
made between graphs, or a scalar. Everything downstream works from the bundle
alone, so it records enough to rebuild weights and inputs on a CPU-only machine
from (problem file, seed, dtype): see build_problem().
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import itertools
import json
import logging
import math
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch

FORMAT = "kernelopt-bundle"
FORMAT_VERSION = 1
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

_module_counter = itertools.count()


class CaptureError(Exception):
    """A failure the user can act on: `what` went wrong and `fix` says what to do."""

    def __init__(self, what: str, fix: str):
        super().__init__(f"{what}; {fix}")


# ---------------------------------------------------------------- problem loading


def load_problem(path: str | os.PathLike) -> Any:
    """Import an nn.Module problem file by path (kernel files: kernel_files.import_kernel_file)."""
    module = _import_file(path)
    missing = [a for a in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, a)]
    if missing:
        raise CaptureError(
            f"problem file {path} lacks {', '.join(missing)}",
            "define class Model(nn.Module), get_inputs() and get_init_inputs() (or, for a Triton or Helion "
            "kernel file, kernels, a launcher and get_inputs(): docs/inputs.md)",
        )
    return module


def _import_file(path: str | os.PathLike) -> Any:
    """Import a file by path under a unique module name (two problems may share a stem)."""
    path = Path(path)
    if not path.is_file():
        raise CaptureError(f"problem file {path} not found", "pass the path of an existing .py problem file")
    name = f"kernelopt_problem_{path.stem}_{next(_module_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CaptureError(f"cannot import {path}", "the problem must be a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # classes defined in it (dataclasses, pickling) look themselves up here
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(name, None)
        raise CaptureError(
            f"problem file {path} fails to import: {_one_line(e)}",
            f"run `python {path}` to see the full error and fix the file",
        ) from e
    return module


def seed_all(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    try:
        import numpy

        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass


def build_problem(problem, seed: int = 0, device: str = "cpu", dtype: torch.dtype | None = None):
    """Return (model, inputs, init_inputs) exactly as capture builds them.

    Weights and inputs are always created on the CPU (the problem's own code does
    that) under fixed seeds, cast, then moved, so the same (problem, seed, dtype)
    gives bit-identical values on any machine. `problem` is a path or a module.
    """
    module = problem if hasattr(problem, "Model") else load_problem(problem)
    try:
        seed_all(seed)
        init_inputs = list(module.get_init_inputs())
        model = module.Model(*init_inputs)
        seed_all(seed + 1)
        inputs = list(module.get_inputs())
    except Exception as e:
        raise CaptureError(f"building the problem failed: {_one_line(e)}", "fix Model/get_inputs/get_init_inputs") from e
    if dtype is not None:
        model = model.to(dtype)
        inputs = [x.to(dtype) if _is_float_tensor(x) else x for x in inputs]
    model = model.to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    return model, inputs, init_inputs


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


# ---------------------------------------------------------------- recording hook


class _Recorder:
    """A torch.compile backend that is Inductor plus a tap on each generated module.

    Dynamo calls backend() once per graph; compile_fx runs AOT autograd and calls
    inner() with the lowered graph, which compiles it with the stock
    compile_fx_inner and wraps the module's call() to record its arguments.
    """

    def __init__(self, config_patches: dict[str, Any]):
        self.config_patches = config_patches
        self.executed: list[dict] = []  # graph records, in order of first execution
        self.recording = True  # cleared after the first model run; later compiles are not captured

    def backend(self, gm: torch.fx.GraphModule, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        sources = [_source_name(n) for n in gm.graph.nodes if n.op == "placeholder"]

        def inner(gm2, example_inputs2, **kwargs):
            return self._inner(gm2, example_inputs2, sources, **kwargs)

        return compile_fx(gm, example_inputs, inner_compile=inner, config_patches=self.config_patches)

    def _inner(self, gm, example_inputs, dynamo_sources, **kwargs):
        from torch._inductor.compile_fx import compile_fx_inner

        compiled = compile_fx_inner(gm, example_inputs, **kwargs)
        source = getattr(compiled, "source_code", None)
        if source is None or getattr(compiled, "current_callable", None) is None:
            # A graph without any op (e.g. it only returns an input) gets no module; nothing to capture.
            return compiled
        record = {"source": source, "dynamo_sources": dynamo_sources, "args": None, "outputs": None}
        original = compiled.current_callable

        def recording_call(args):
            if record["args"] is None and self.recording:
                # call() clears `args` as it consumes them, so describe them first.
                record["args"] = [_describe(a) for a in args]
                self.executed.append(record)
                out = original(args)
                record["outputs"] = [_describe(o) for o in out]
                return out
            return original(args)

        compiled.current_callable = recording_call
        return compiled


def _source_name(node) -> str | None:
    arg = node.meta.get("grapharg")
    source = getattr(arg, "source", None)
    if source is None:
        return None
    name = source.name  # a method in older torch, a property in newer
    return name() if callable(name) else name


def _describe(v: Any) -> dict:
    if isinstance(v, torch.Tensor):
        return {
            "shape": list(v.shape),
            "stride": list(v.stride()),
            "dtype": _dtype_name(v.dtype),
            "storage_offset": v.storage_offset(),
            "data_ptr": v.data_ptr(),
            "storage_ptr": v.untyped_storage().data_ptr(),
        }
    if isinstance(v, (bool, int, float, torch.SymInt, torch.SymFloat, torch.SymBool)):
        return {"scalar": _jsonable(v)}
    return {"other": type(v).__name__}


# Left out of a graph's recorded outputs: addresses only mean something inside this
# run (they serve the argument matching), and outputs are described by layout alone.
_RUN_SPECIFIC = ("data_ptr", "storage_ptr", "storage_offset")


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------- argument mapping


def _map_args(described: list[dict], model: torch.nn.Module, inputs: list) -> list[dict]:
    """Say what each call() argument is, by identity (data_ptr + layout) with the model's tensors."""
    known = [("parameter", {"name": n}, t) for n, t in model.named_parameters()]
    known += [("buffer", {"name": n}, t) for n, t in model.named_buffers()]
    known += [("input", {"input_index": i}, t) for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)]
    mapped = []
    for index, d in enumerate(described):
        entry: dict[str, Any] = {"index": index}
        if "scalar" in d:
            entry.update(kind="scalar", value=d["scalar"])
        elif "other" in d:
            entry.update(kind="other", type=d["other"])
        else:
            entry.update(_identify(d, known))
            entry.update({k: d[k] for k in ("shape", "stride", "dtype", "storage_offset")})
        mapped.append(entry)
    return mapped


def _identify(d: dict, known: list) -> dict:
    for kind, key, t in known:
        if (t.data_ptr(), list(t.shape), list(t.stride()), _dtype_name(t.dtype)) == (
            d["data_ptr"], d["shape"], d["stride"], d["dtype"]
        ):
            return {"kind": kind, **key}
    # Not a model tensor: made between graphs. Say which model tensor it views, if any.
    for kind, key, t in known:
        if t.untyped_storage().data_ptr() == d["storage_ptr"]:
            return {"kind": "intermediate", "aliases": {"kind": kind, **key}}
    return {"kind": "intermediate"}


# ---------------------------------------------------------------- capture


def resolve_mode(mode: str) -> dict[str, Any]:
    """The Inductor config patches torch.compile applies for `mode` (torch's own table).

    torch.compile passes mode= to a custom backend instead of applying it, so we
    apply the same patches ourselves, through compile_fx(config_patches=...).
    """
    from torch._inductor import list_mode_options

    try:
        patches = dict(list_mode_options(mode))
    except RuntimeError as e:
        raise CaptureError(f"unknown --mode {mode}", "use default or max-autotune-no-cudagraphs") from e
    if patches.get("triton.cudagraphs"):
        raise CaptureError(
            f"--mode {mode} replays CUDA graphs, which bypass the generated call() that capture records",
            "use --mode max-autotune-no-cudagraphs (or default)",
        )
    return patches


def capture(
    problem_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    mode: str = "default",
    seed: int = 0,
    device: str = "cuda",
    dtype: str | None = None,
    force: bool = False,
    autotune_cache: bool = True,
) -> dict:
    """Capture one problem into the bundle directory `out_dir`; return its meta. Raises CaptureError.

    autotune_cache=False generates the module with Inductor's local autotune cache off: whoever loads
    it chooses among a kernel's launch configs by timing them itself, never reading a choice this
    capture made (`kernelopt bench` captures several problems at once, where timings are shared).
    """
    started = time.monotonic()
    problem_path, out_dir = Path(problem_path), Path(out_dir)
    _check_out_dir(out_dir, force)
    if dtype is not None and dtype not in DTYPES:
        raise CaptureError(f"unknown --dtype {dtype}", f"use one of {', '.join(DTYPES)}")
    if device not in ("cuda", "cpu"):
        raise CaptureError(f"unknown --device {device}", "use cuda or cpu")
    from .kernel_files import input_kind

    kind = input_kind(problem_path)
    if kind != "module" and mode != "default":
        raise CaptureError(f"--mode {mode} applies to torch.compile; a {kind} kernel file is captured as written",
                           "drop --mode")
    patches = resolve_mode(mode)
    if not autotune_cache:
        patches["autotune_local_cache"] = False
    if device == "cuda" and not torch.cuda.is_available():
        raise CaptureError("--device cuda requested but CUDA is not available", "run on a GPU machine or pass --device cpu")
    if kind == "triton":
        from .capture_triton import capture_triton

        return capture_triton(problem_path, out_dir, seed, device, dtype, force, started)
    if kind == "helion":
        from .capture_helion import capture_helion

        return capture_helion(problem_path, out_dir, seed, device, dtype, force, started)
    problem = load_problem(problem_path)
    model, inputs, init_inputs = build_problem(problem, seed, device, DTYPES.get(dtype))

    torch._dynamo.reset()  # no graphs cached from an earlier capture in this process
    recorder = _Recorder(patches)
    compiled_model = torch.compile(model, backend=recorder.backend, dynamic=False)
    # The AOT autograd cache would return a cached module without calling our inner
    # compile; the FX graph cache is fine (it sits inside compile_fx_inner).
    with torch.no_grad(), torch._functorch.config.patch(enable_autograd_cache=False):
        try:
            compiled_model(*inputs)
        except Exception as e:
            raise CaptureError(
                f"torch.compile failed: {_one_line(e)}", "rerun with KERNELOPT_DEBUG=1 for the traceback"
            ) from e
        recorder.recording = False
        if not recorder.executed:
            raise CaptureError(
                "torch.compile ran no Inductor-generated module (Dynamo fell back to eager)",
                "rerun with TORCH_LOGS=graph_breaks,recompiles to see why",
            )
        compiled_out = compiled_model(*inputs)
        eager_out = model(*inputs)

    graphs = [
        {
            "module": f"module_{i}.py",
            "args": _map_args(g["args"], model, inputs),
            "dynamo_sources": g["dynamo_sources"],
            "outputs": [{k: v for k, v in o.items() if k not in _RUN_SPECIFIC} for o in g["outputs"]],
        }
        for i, g in enumerate(recorder.executed)
    ]
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "problem": "problem.py",
        "problem_name": problem_path.name,
        "mode": mode,
        "inductor_config": patches,
        "seed": seed,
        "device": device,
        "dtype": dtype,
        "versions": _versions(),
        "gpu": _gpu_info() if device == "cuda" else None,
        "init_inputs": _jsonable(init_inputs),
        "inputs": [_describe_input(x) for x in inputs],
        "outputs": [_describe_input(o) for o in _flatten(compiled_out)],
        "graphs": graphs,
        "eager_vs_compiled": _compare(eager_out, compiled_out),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "capture_seconds": round(time.monotonic() - started, 3),
    }
    _write_bundle(out_dir, force, problem_path, [g["source"] for g in recorder.executed], meta)
    return meta


def _describe_input(x: Any) -> dict:
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "stride": list(x.stride()), "dtype": _dtype_name(x.dtype)}
    return {"scalar": _jsonable(x)}


def _flatten(out: Any) -> list:
    return torch.utils._pytree.tree_leaves(out)


def _compare(eager: Any, compiled: Any) -> dict:
    """Largest difference between eager and compiled outputs (a sanity note, not a test).

    max_rel is max|compiled - eager| / max|eager| per output, so outputs with
    zeros in them do not blow it up.
    """
    e_leaves, c_leaves = _flatten(eager), _flatten(compiled)
    max_abs = max_rel = 0.0
    for e, c in zip(e_leaves, c_leaves):
        if not isinstance(e, torch.Tensor):
            continue
        if not isinstance(c, torch.Tensor) or c.shape != e.shape:
            return {"max_abs": None, "max_rel": None, "note": "compiled outputs differ in structure or shape"}
        e, c = e.detach().double().cpu(), c.detach().double().cpu()
        diff = (c - e).abs()
        diff[(c == e) | (c.isnan() & e.isnan())] = 0  # equal infinities and NaN-vs-NaN are no difference
        if diff.numel():
            d = diff.max().item()
            max_abs = max(max_abs, d)
            max_rel = max(max_rel, d / max(e.abs().nan_to_num(posinf=0, neginf=0).max().item(), 1e-30))
    if len(e_leaves) != len(c_leaves):
        return {"max_abs": None, "max_rel": None, "note": "compiled and eager return different numbers of outputs"}
    return {"max_abs": max_abs, "max_rel": max_rel}


def _versions() -> dict:
    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    return {
        "torch": torch.__version__,
        "triton": triton_version,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
    }


def _gpu_info() -> dict:
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "name": p.name,
        "capability": [p.major, p.minor],
        "sm_count": p.multi_processor_count,
        "l2_bytes": getattr(p, "L2_cache_size", None),
    }


def _jsonable(v: Any) -> Any:
    """JSON-safe form: numbers/strings/lists kept, SymInts resolved, other objects as repr()."""
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        v = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(v)](v)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)  # JSON has no NaN/Infinity; written as "nan", "inf", "-inf"
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, torch.Tensor):
        return {"tensor": _describe_input(v)}
    return repr(v)


# ---------------------------------------------------------------- writing


def _check_out_dir(out_dir: Path, force: bool) -> None:
    if force or not out_dir.exists():
        return
    if out_dir.is_dir() and not any(out_dir.iterdir()):
        return
    raise CaptureError(f"output {out_dir} exists and is not empty", "pass --force to replace it or choose another --out")


def _write_bundle(out_dir: Path, force: bool, problem_path: Path, sources: list[str], meta: dict) -> None:
    """Build the bundle in a temp dir beside out_dir, then rename it into place.

    A failure at any point leaves either the old out_dir or the complete new one.
    """
    _check_out_dir(out_dir, force)  # again: it may have appeared while we compiled
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; the bundle is an ordinary directory
        shutil.copyfile(problem_path, tmp / "problem.py")
        for i, source in enumerate(sources):
            # newline="" writes the text byte for byte (no newline translation).
            with open(tmp / f"module_{i}.py", "w", encoding="utf-8", newline="") as f:
                f.write(source)
        with open(tmp / "meta.json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, allow_nan=False)
            f.write("\n")
        if out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()
        if out_dir.exists() or out_dir.is_symlink():  # only with --force
            old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
            os.rename(out_dir, old)
            os.rename(tmp, out_dir)
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink()
        else:
            os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ---------------------------------------------------------------- command line


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or "(no message)"
    text = f"{type(e).__name__}: {text}"
    return text if len(text) <= 400 else text[:397] + "..."


def _is_kernel_file(path: str) -> bool:
    from .kernel_files import input_kind

    try:
        return input_kind(path) != "module"
    except CaptureError:
        return False  # reported by capture() itself


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kernelopt.worker.capture",
        description="Run a problem through torch.compile and write an artifact bundle (docs/bundle.md).",
    )
    parser.add_argument("problem", help="problem file: Model/get_inputs/get_init_inputs, or a Triton or Helion "
                        "kernel file with get_inputs and a launcher (docs/inputs.md)")
    parser.add_argument("--out", required=True, help="bundle directory to create")
    parser.add_argument(
        "--mode",
        default="default",
        help="torch.compile mode: default | max-autotune-no-cudagraphs (CUDA-graph modes are refused)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for weights (seed) and inputs (seed+1)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dtype", choices=list(DTYPES), help="cast the model and floating inputs to this dtype")
    parser.add_argument("--force", action="store_true", help="replace an existing non-empty --out")
    parser.add_argument("--no-autotune-cache", action="store_true",
                        help="generate the module with Inductor's local autotune cache off (its loader times the "
                        "launch configs itself)")
    args = parser.parse_args(argv)
    if args.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1" and _is_kernel_file(args.problem):
        # A kernel file runs its kernels in CPU mode through Triton's interpreter, which must be chosen
        # before triton is first imported: start again with it.
        env = dict(os.environ, TRITON_INTERPRET="1")
        os.execve(sys.executable, [sys.executable, "-m", "kernelopt.worker.capture", *(argv or sys.argv[1:])], env)
    debug = os.environ.get("KERNELOPT_DEBUG") == "1"
    if not debug and not os.environ.get("TORCH_LOGS"):
        # Dynamo logs its own tracebacks on compile errors; we report those in one line.
        torch._logging.set_logs(all=logging.CRITICAL)
    try:
        meta = capture(args.problem, args.out, args.mode, args.seed, args.device, args.dtype, args.force,
                       autotune_cache=not args.no_autotune_cache)
    except Exception as e:
        if debug:
            traceback.print_exc()
        # Run as `python -m`, this file is __main__; kernel-file capture raises the package's CaptureError.
        from kernelopt.worker.capture import CaptureError as PackageCaptureError

        message = str(e) if isinstance(e, (CaptureError, PackageCaptureError)) else f"{_one_line(e)}; rerun with KERNELOPT_DEBUG=1 for the traceback"
        print(f"kernelopt capture: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    diff = meta["eager_vs_compiled"]
    print(
        f"kernelopt capture: wrote {args.out}: {len(meta['graphs'])} graph(s), "
        f"max_abs={diff['max_abs']} max_rel={diff['max_rel']}, {meta['capture_seconds']:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
