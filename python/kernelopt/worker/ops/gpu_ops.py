"""GPU-only worker operations: isolated kernel timing, baseline vs re-stitched
module timing (the end-to-end gate), and per-kernel profiles of the whole
module (docs/protocol.md). CPU mode answers "not measured": CPU times are never
reported as performance.
"""

from __future__ import annotations

import time
from collections import defaultdict

import torch

from ..bundle_runner import call_args
from ..bundle_state import (BundleState, candidate_launcher, get_bundle, model_runner, problem_of, run_need,
                            stitched_modules)
from ..measure import memory, timing
from ..measure.launches import LaunchRecord, restore, snapshot
from ..measure.poison import poison_args
from ..protocol import op
from .bundle_ops import read_only_args, run_baseline


def require_gpu(state: BundleState) -> dict | None:
    if state.device != "cuda":
        return {"measured": False, "reason": "CPU mode: times are not measured"}
    return None


def _timed_launch(state: BundleState, launcher, rec: LaunchRecord, poisoned: tuple = ()):
    """(fn, prepare, shared): fn launches on fixed buffers; prepare restores them to the recorded
    inputs and poisons the pure outputs (NaN), outside the timed region. The poison makes every
    repetition start from outputs that hold nothing of the previous call, so a candidate that keeps
    its result across calls and skips the work when the output is already there cannot be timed as
    fast. `shared`: the read-only arguments timed on the record itself (timing_args)."""
    args, shared = timing_args(state, rec, "timing a kernel")
    return _launch_on(launcher, rec, args), restore_and_poison(args, rec, poisoned), shared


def timing_args(state: BundleState, rec: LaunchRecord, stage: str) -> tuple[list, dict]:
    """The buffers a timing launches on, and {position: fingerprint} of those it shares with the record.

    Every tensor is copied (a run may write into it) while the copies and the L2 flush buffer fit
    under the soft target as things are. Else the arguments Inductor names `in_ptr*` (read only, as
    G2's lean path relies on) are the record's own tensors, fingerprinted here and checked after the
    runs (`memory.changed_since`): a 100 MB problem's screening held the record, a whole copy of it and the
    flush buffer, 3.0x torch.compile's peak (benchmarks/RESULTS.md, session 32). Times do not depend
    on which buffers are used: the same bytes, read the same way."""
    rec.use(stage)
    tensors = {i for i, a in enumerate(rec.args) if isinstance(a, torch.Tensor)}
    flush = timing.flush_bytes()  # the timing allocates it: it counts too
    read_only = read_only_args(state, rec.graph, rec.kernel) & tensors
    share = bool(read_only) and not memory.fits_now(memory.storage_bytes(rec.args) + flush)
    copied = tensors - read_only if share else tensors
    memory.reserve(memory.storage_bytes(rec.args[i] for i in copied) + flush, stage, keep=(rec,))
    args = [snapshot(a) if i in copied else a for i, a in enumerate(rec.args)]
    return args, memory.fingerprints(rec.args, tensors - copied)


def _launch_on(launcher, rec: LaunchRecord, args: list):
    stream = torch.cuda.current_stream().cuda_stream

    def fn():
        launcher.run(*args, stream=stream, **rec.kwargs)

    fn.args = args
    return fn


def restore_and_poison(args: list, rec: LaunchRecord, poisoned: tuple = ()):
    """The `prepare` of a timed launch on `args`: recorded inputs back in place, pure outputs NaN."""

    def prepare():
        for a, r in zip(args, rec.args):
            if isinstance(a, torch.Tensor) and a is not r:  # a shared read-only argument is the record's
                restore(a, r)
        poison_args(args, poisoned)

    return prepare


@op("time_kernel")
def time_kernel(req: dict) -> dict:
    """The original kernel alone, and the candidate (source and/or config) if given, interleaved."""
    state = get_bundle(req)
    if (skip := require_gpu(state)) is not None:
        return skip
    if not state.launches:
        run_baseline(req)
    rec = state.launch(req.get("graph", 0), req["kernel"], req.get("launch", 0))
    launchers = [getattr(state.modules[rec.graph], rec.kernel)]
    if req.get("source") is not None or req.get("config") is not None:
        launchers.append(candidate_launcher(state, rec, req.get("source"), req.get("config")))
    poisoned = tuple(req.get("poison", ()))
    # One set of buffers for both: each repetition's prepare restores it before the launch it times.
    fn, prepare, shared = _timed_launch(state, launchers[0], rec, poisoned)
    args = fn.args
    fns = [fn] + [_launch_on(lau, rec, args) for lau in launchers[1:]]
    results = timing.time_interleaved(fns, reps=req.get("reps", 50), prepare=[prepare] * len(fns))
    if bad := memory.changed_since(rec.args, shared):
        state.launches = []  # the record itself was written: the next request records again
        raise RuntimeError(f"{'the candidate' if len(fns) > 1 else 'the original kernel'} wrote argument(s) {bad}, "
                           "which the kernel only reads (Inductor names them in_ptr); its times are not valid")
    out = {"measured": True, "baseline": results[0]}
    if len(results) > 1:
        out["candidate"] = results[1]
    return out


class Switch:
    """Stands in for one graph's module: `call` goes to the module chosen now. One compiled model
    runs both the baseline and the stitched modules, so both are timed through the same Dynamo
    guards, AOT wrapper, argument building and synchronization; only the modules differ."""

    def __init__(self, choices: list):
        self.choices, self.current = choices, 0

    def call(self, args):
        return self.choices[self.current].call(args)


@op("time_module")
def time_module(req: dict) -> dict:
    """The whole model with the baseline modules and with re-stitched ones (`sources`, one module
    text per graph, or `source` for graph `graph`), timed interleaved through the same call path."""
    state = get_bundle(req)
    if (skip := require_gpu(state)) is not None:
        return skip
    switches = [Switch([base, new]) for base, new in zip(state.modules, stitched_modules(state, req))]
    _reserve_timed_run(state)
    run = model_runner(state, switches)

    def select(which: int):
        def prepare():  # outside the timed region
            for s in switches:
                s.current = which
        return prepare

    # The first call compiles the model (Dynamo, AOT): outside the warm-up, whose longest host
    # time sizes the spin that hides launch overhead.
    for which in (0, 1):
        select(which)()
        run()
    torch.cuda.synchronize()
    base, optimized = timing.time_interleaved([run, run], reps=req.get("reps", 50), prepare=[select(0), select(1)])
    return {"measured": True, "baseline": base, "optimized": optimized}


def _reserve_timed_run(state: BundleState) -> None:
    """Room for a timed model run and the L2 flush buffer its timing allocates: left out, the
    buffer's fixed 256 MiB came on top of held state, and a 0.25 GiB problem's job peaked at 3.6x
    torch.compile's peak in time_module (benchmarks/RESULTS.md, session 29)."""
    memory.reserve(run_need(state) + timing.flush_bytes(), "timing the model")


def _direct_call(state: BundleState):
    """A callable running the single-graph module on the problem's inputs without Dynamo on the
    host path (the call() a user's compiled model makes), or None when graphs need each other."""
    if len(state.modules) != 1 or any(a["kind"] == "intermediate" for a in state.meta["graphs"][0]["args"]):
        return None
    model, inputs = problem_of(state)
    base = call_args(state.dir, 0, model, inputs)
    call = state.modules[0].call

    def run():
        # Parameters come as inputs that require grad: Inductor's extern calls with out= refuse them
        # under grad mode, and a compiled model's forward runs them without autograd anyway.
        with torch.no_grad():
            call(list(base))

    return run


@op("profile")
def profile(req: dict) -> dict:
    """Per-kernel GPU time inside the module, the Triton/vendor split, and the module's GPU time."""
    state = get_bundle(req)
    if (skip := require_gpu(state)) is not None:
        return skip
    _reserve_timed_run(state)
    direct = _direct_call(state)
    run = direct or model_runner(state)
    run()  # a model runner compiles on its first call: not part of the warm-up that sizes the spin
    torch.cuda.synchronize()
    t = time.perf_counter()
    run()
    torch.cuda.synchronize()
    reps = profile_reps(req.get("reps", 20), time.perf_counter() - t)
    whole = timing.time_interleaved([run], reps=reps)[0]
    triton_names = {name for m in state.modules for name in m.__kernel_vars__.values()}
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile as torch_profile

    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            run()
        torch.cuda.synchronize()
    per_kernel: dict[str, list[float]] = defaultdict(list)
    for evt in prof.events():
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            us = evt.time_range.elapsed_us()
            if us > 0:
                per_kernel[evt.name].append(us / 1000.0)
    kernels = []
    for name, times in per_kernel.items():
        times.sort()
        kernels.append({
            "name": name,
            "triton": name in triton_names,
            "calls_per_run": len(times) / reps,
            "median_ms": times[len(times) // 2],
            "ms_per_run": sum(times) / reps,
        })
    kernels.sort(key=lambda k: -k["ms_per_run"])
    triton_ms = sum(k["ms_per_run"] for k in kernels if k["triton"])
    vendor_ms = sum(k["ms_per_run"] for k in kernels if not k["triton"])
    return {"measured": True, "module": whole, "kernels": kernels, "triton_ms": triton_ms, "vendor_ms": vendor_ms,
            "kernel_sum_ms": triton_ms + vendor_ms, "direct_call": direct is not None, "reps": reps}


def profile_reps(asked: int, run_s: float) -> int:
    """Repetitions of the profile's timed and traced loops: as asked, fewer for a model whose run takes over a
    tenth of a second (two seconds of runs each, at least 5, never more than asked): a fresh draw's 192 ms scan
    spent 9.5 s profiling at 20, most of what its search then lacked."""
    if run_s <= 0.1:
        return asked
    return min(asked, max(5, int(2.0 / run_s)))
