"""Capture: run a problem through torch.compile (Inductor) and write an artifact bundle.

    python -m kernelopt.worker.capture PROBLEM.py --out BUNDLE [--mode default]
        [--seed 0] [--device cuda|cpu] [--cpu-kernels cpp|triton] [--dtype float32|bfloat16|float16]
        [--force] [--json] [-q]

The bundle (format in docs/bundle.md) holds the problem file, the exact source of
every module Inductor generated (module_0.py, module_1.py, ... one per graph, in
order of first execution) and meta.json, which says what each argument of each
module's call() is: a model parameter/buffer, a forward input, an intermediate
made between graphs, or a scalar. Everything downstream works from the bundle
alone, so it records enough to rebuild weights and inputs on a CPU-only machine
from (problem file, seed, dtype): see build_problem().

The pieces kernel-file capture shares with it (format constants, CaptureError, problem
loading, value descriptions, the comparison and the atomic bundle write) are in
capture_common.py; capture_triton.py and capture_helion.py capture kernel files, which capture()
hands to them by input_kind() (kernel_files.py).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from .capture_common import (
    DTYPES,
    FORMAT,
    FORMAT_VERSION,
    CaptureError,
    _check_out_dir,
    _compare,
    _describe_input,
    _dtype_name,
    _flatten,
    _gpu_info,
    _jsonable,
    one_line,
    _versions,
    _write_bundle,
    build_problem,
    load_problem,
)
from .capture_helion import capture_helion
from .capture_triton import capture_triton
from .cpu_triton import interpreted_triton
from .kernel_files import input_kind


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
    cpu_kernels: str = "cpp",
) -> dict:
    """Capture one problem into the bundle directory `out_dir`; return its meta. Raises CaptureError.

    autotune_cache=False generates the module with Inductor's local autotune cache off: whoever loads
    it chooses among a kernel's launch configs by timing them itself, never reading a choice this
    capture made (`kernelopt bench` captures several problems at once, where timings are shared).

    cpu_kernels="triton" (with device="cpu") has Inductor write Triton kernels for the CPU, run by
    Triton's interpreter (cpu_triton.py): a bundle `kernelopt optimize --device cpu` can optimize.
    "cpp" is Inductor's own CPU backend (C++ kernels: a bundle for inspect and stitch only).
    """
    started = time.monotonic()
    problem_path, out_dir = Path(problem_path), Path(out_dir)
    _check_out_dir(out_dir, force)
    if dtype is not None and dtype not in DTYPES:
        raise CaptureError(f"unknown --dtype {dtype}", f"use one of {', '.join(DTYPES)}")
    if device not in ("cuda", "cpu"):
        raise CaptureError(f"unknown --device {device}", "use cuda or cpu")
    if cpu_kernels not in ("cpp", "triton"):
        raise CaptureError(f"unknown --cpu-kernels {cpu_kernels}", "use cpp or triton")
    if cpu_kernels == "triton" and device != "cpu":
        raise CaptureError("--cpu-kernels triton applies to --device cpu (on a GPU Inductor writes Triton kernels "
                           "anyway)", "drop --cpu-kernels, or pass --device cpu")
    triton_on_cpu = device == "cpu" and cpu_kernels == "triton"
    kind = input_kind(problem_path)
    if kind != "module" and mode != "default":
        raise CaptureError(f"--mode {mode} applies to torch.compile; a {kind} kernel file is captured as written",
                           "drop --mode")
    patches = resolve_mode(mode)
    if not autotune_cache:
        patches["autotune_local_cache"] = False
    if triton_on_cpu:
        patches["cpu_backend"] = "triton"
        # Strides padded as on a GPU (Inductor aligns a buffer's strides above 1024 elements to 128 bytes, and skips
        # that for CPU tensors unless told): the intermediate buffers then have the layouts a GPU capture's have.
        patches["disable_padding_cpu"] = False
    if device == "cuda" and not torch.cuda.is_available():
        raise CaptureError("--device cuda requested but CUDA is not available", "run on a GPU machine or pass --device cpu")
    if kind == "triton":
        return capture_triton(problem_path, out_dir, seed, device, dtype, force, started)
    if kind == "helion":
        return capture_helion(problem_path, out_dir, seed, device, dtype, force, started)
    problem = load_problem(problem_path)
    stages: dict[str, float] = {}
    clock = [started]

    def stage(name: str) -> None:  # where capture's time goes (meta.json capture_stages)
        now = time.monotonic()
        stages[name] = round(now - clock[0], 3)
        clock[0] = now

    stage("setup")  # the checks above and the problem file's import (on a GPU: CUDA's start)

    drawn: dict = {}
    model, inputs, init_inputs = build_problem(problem, seed, device, DTYPES.get(dtype), inputs_device=device,
                                               drawn=drawn)
    stage("build")

    torch._dynamo.reset()  # no graphs cached from an earlier capture in this process
    recorder = _Recorder(patches)
    compiled_model = torch.compile(model, backend=recorder.backend, dynamic=False)
    # The AOT autograd cache would return a cached module without calling our inner
    # compile; the FX graph cache is fine (it sits inside compile_fx_inner).
    with torch.no_grad(), torch._functorch.config.patch(enable_autograd_cache=False), \
            (interpreted_triton() if triton_on_cpu else contextlib.nullcontext()):
        try:
            compiled_out = compiled_model(*inputs)
        except Exception as e:
            raise CaptureError(
                f"torch.compile failed: {one_line(e)}", "rerun with KERNELOPT_DEBUG=1 for the traceback"
            ) from e
        recorder.recording = False
        if not recorder.executed:
            raise CaptureError(
                "torch.compile ran no Inductor-generated module (Dynamo fell back to eager)",
                "rerun with TORCH_LOGS=graph_breaks,recompiles to see why",
            )
        stage("compile")
        eager_out, eager_call_bytes = _eager_call(model, inputs, device)
        stage("eager")
    eager_vs_compiled = _compare(eager_out, compiled_out) if eager_out is not None else {
        "max_abs": None, "max_rel": None,
        "note": "the eager model ran out of device memory beside torch.compile's output"}
    del eager_out
    stage("compare")

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
        **({"cpu_kernels": cpu_kernels} if device == "cpu" else {}),
        "dtype": dtype,
        "versions": _versions(),
        "gpu": _gpu_info() if device == "cuda" else None,
        "init_inputs": _jsonable(init_inputs),
        "inputs": [_describe_input(x) for x in inputs],
        "outputs": [_describe_input(o) for o in _flatten(compiled_out)],
        "graphs": graphs,
        "eager_vs_compiled": eager_vs_compiled,
        **({"eager_call_bytes": eager_call_bytes} if eager_call_bytes is not None else {}),
        "inputs_device": drawn.get("inputs_device", "cpu"),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "capture_seconds": round(time.monotonic() - started, 3),
    }
    _write_bundle(out_dir, force, problem_path, [g["source"] for g in recorder.executed], meta)
    stage("write")
    meta["capture_stages"] = stages  # printed; the bundle's meta.json keeps capture_seconds
    return meta


def _eager_call(model, inputs: list, device: str) -> tuple[Any, int | None]:
    """The eager model's output and, on a GPU, what its call allocated at most above what was in use
    (meta.json `eager_call_bytes`): the worker's memory plan reads it to run the eager reference on the
    host when its temporaries alone would pass the plan's soft target (docs/memory.md). A call that
    runs out of device memory gives no output and at least the bytes that were free."""
    if device != "cuda":
        return model(*inputs), None
    torch.cuda.synchronize()
    start = torch.cuda.memory_allocated()
    free_before = torch.cuda.mem_get_info()[0]
    torch.cuda.reset_peak_memory_stats()
    try:
        out = model(*inputs)
        torch.cuda.synchronize()
    except torch.OutOfMemoryError:
        out = None
    if out is None:
        torch.cuda.empty_cache()
        return None, free_before + 1
    return out, max(0, torch.cuda.max_memory_allocated() - start)


# ---------------------------------------------------------------- command line


def _is_kernel_file(path: str) -> bool:
    try:
        return input_kind(path) != "module"
    except CaptureError:
        return False  # reported by capture() itself


def _seconds_since_process_start() -> float | None:
    """How long ago this process started (Linux /proc), or None: the imports' share of a capture, which
    its own clock does not see (a 10-12 s capture took 19-23 s from start to exit on the H100)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # starttime, field 22, in clock ticks since boot
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


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
    parser.add_argument("--cpu-kernels", default="cpp", choices=["cpp", "triton"],
                        help="with --device cpu: Inductor's C++ kernels (inspect and stitch only), or Triton kernels "
                        "run by Triton's interpreter (a bundle `kernelopt optimize --device cpu` optimizes)")
    parser.add_argument("--dtype", choices=list(DTYPES), help="cast the model and floating inputs to this dtype")
    parser.add_argument("--force", action="store_true", help="replace an existing non-empty --out")
    parser.add_argument("--json", action="store_true", help="print the bundle's meta.json object on stdout instead of "
                        "the summary line")
    parser.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    parser.add_argument("--no-autotune-cache", action="store_true",
                        help="generate the module with Inductor's local autotune cache off (its loader times the "
                        "launch configs itself)")
    args = parser.parse_args(argv)
    imports = _seconds_since_process_start()
    if args.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1" and (
            args.cpu_kernels == "triton" or _is_kernel_file(args.problem)):
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
                       autotune_cache=not args.no_autotune_cache, cpu_kernels=args.cpu_kernels)
    except Exception as e:
        if debug:
            traceback.print_exc()
        message = str(e) if isinstance(e, CaptureError) else f"{one_line(e)}; rerun with KERNELOPT_DEBUG=1 for the traceback"
        print(f"kernelopt capture: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    diff = meta["eager_vs_compiled"]
    if args.json:
        print(json.dumps(meta, indent=2))
    elif not args.quiet:
        print(
            f"kernelopt capture: wrote {args.out}: {len(meta['graphs'])} graph(s), "
            f"max_abs={diff['max_abs']} max_rel={diff['max_rel']}, {meta['capture_seconds']:.1f}s"
            + (" (" + ", ".join(f"{k} {v:.1f}s" for k, v in meta["capture_stages"].items()) + ")"
               if meta.get("capture_stages") else "")
            + (f"; {imports:.1f}s before it (the interpreter's start, imports)" if imports is not None else "")
        )
    if args.device == "cpu" and args.cpu_kernels == "cpp" and meta.get("input_kind", "module") == "module":
        # Inductor's CPU backend writes C++ kernels: a bundle for testing inspect and stitch, which
        # `kernelopt optimize` refuses (no Triton kernel to optimize).
        print("kernelopt capture: warning: --device cpu compiled the model with Inductor's CPU backend, so the bundle "
              "holds C++ kernels, which kernelopt cannot optimize; capture on a CUDA device (--device cuda) for a "
              "bundle to optimize, or pass --cpu-kernels triton for Triton kernels run by the interpreter",
              file=sys.stderr)
    return 0

