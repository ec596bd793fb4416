"""What every capture path shares: the bundle format, problem loading, describing values, writing.

capture.py (nn.Module problems through torch.compile), capture_triton.py and capture_helion.py
(kernel files) all build a problem from (file, seed, dtype), describe inputs and outputs the same
way, compare against the reference run and write the bundle (docs/bundle.md) atomically; those
pieces live here, apart from the Inductor recording hook and the command line (capture.py), so a
reader of one capture path sees the shared steps in one place. Every capture module imports them
from here (capture_triton/capture_helion as `cap.<name>`), and this module imports none of them.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import platform
import random
import shutil
import sys
import tempfile
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


def one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or "(no message)"
    text = f"{type(e).__name__}: {text}"
    return text if len(text) <= 400 else text[:397] + "..."


# ---------------------------------------------------------------- problem loading


def load_problem(path: str | os.PathLike) -> Any:
    """Import an nn.Module problem file by path (kernel files: kernel_files.import_kernel_file)."""
    module = import_file(path)
    missing = [a for a in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, a)]
    if missing:
        raise CaptureError(
            f"problem file {path} lacks {', '.join(missing)}",
            "define class Model(nn.Module), get_inputs() and get_init_inputs() (or, for a Triton or Helion "
            "kernel file, kernels, a launcher and get_inputs(): docs/inputs.md)",
        )
    return module


def import_file(path: str | os.PathLike) -> Any:
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
            f"problem file {path} fails to import: {one_line(e)}",
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


def build_problem(problem, seed: int = 0, device: str = "cpu", dtype: torch.dtype | None = None,
                  inputs_device: str = "cpu", drawn: dict | None = None):
    """Return (model, inputs, init_inputs) exactly as capture builds them.

    Weights are always created on the CPU (the problem's own code does that) under fixed seeds,
    cast, then moved, so the same (problem, seed, dtype) gives bit-identical weights on any machine.
    Inputs are drawn on `inputs_device`: the CPU (bit-identical anywhere), or the GPU, where
    inputs of several GB take milliseconds instead of tens of seconds; the bundle records which
    (meta.json `inputs_device`) and every rebuild on that device draws the same values. A problem
    whose get_inputs() cannot run there (a CPU generator, numpy) is drawn on the CPU instead; the
    device actually used is put in `drawn["inputs_device"]`. `problem` is a path or a module."""
    module = problem if hasattr(problem, "Model") else load_problem(problem)
    try:
        seed_all(seed)
        init_inputs = list(module.get_init_inputs())
        model = module.Model(*init_inputs)
        inputs = draw_inputs(module, seed, inputs_device)
        if drawn is not None:
            drawn["inputs_device"] = inputs_device_of(inputs)
    except Exception as e:
        raise CaptureError(f"building the problem failed: {one_line(e)}", "fix Model/get_inputs/get_init_inputs") from e
    if dtype is not None:
        model = model.to(dtype)
        inputs = [x.to(dtype) if _is_float_tensor(x) else x for x in inputs]
    model = model.to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    return model, inputs, init_inputs


def draw_inputs(module, seed: int, inputs_device: str, fallback: bool = True) -> list:
    if inputs_device != "cpu":
        try:
            seed_all(seed + 1)
            with torch.device(inputs_device):
                return list(module.get_inputs())
        except Exception:  # noqa: BLE001 - drawn on the CPU below, as problems always were
            if not fallback:
                raise
    seed_all(seed + 1)
    return list(module.get_inputs())


def inputs_device_of(inputs: list) -> str:
    """Where the inputs were drawn, for meta.json ("cpu" when there are no tensor inputs)."""
    return next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


# ---------------------------------------------------------------- describing values


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


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
        # In slices on the outputs' own device (compare.py's): whole float64 copies on the host took
        # most of a capture's time for outputs of several GB.
        from ..measure.compare import slices

        d = m = 0.0
        for cs, es in slices(c.detach(), e.detach(), 48):
            es, cs = es.double(), cs.to(es.device).double()
            diff = (cs - es).abs()
            diff[(cs == es) | (cs.isnan() & es.isnan())] = 0  # equal infinities and NaN-vs-NaN are no difference
            if diff.numel():
                d = max(d, diff.max().item())
                m = max(m, es.abs().nan_to_num(posinf=0, neginf=0).max().item())
        if e.numel():
            max_abs = max(max_abs, d)
            max_rel = max(max_rel, d / max(m, 1e-30))
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
            # _jsonable: an eager-vs-compiled difference can be infinite (a product that overflows on one
            # side only); JSON has no Infinity, and the bundle must still be written.
            json.dump(_jsonable(meta), f, indent=2, allow_nan=False)
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
