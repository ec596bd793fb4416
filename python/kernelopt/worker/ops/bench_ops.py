"""Worker operations of the suite runner (`kernelopt bench`, docs/bench.md):
`bench_times` measures one problem three ways side by side in this process —
eager, torch.compile (the bundle's Inductor modules) and the optimized modules —
and `forget_bundles` drops what earlier problems left in the worker.

Fair timing: torch.compile and the optimized model are one compiled model whose
graphs switch module set between repetitions (gpu_ops.Switch, as the end-to-end
gate does), so both go through the same Dynamo guards, AOT wrapper, argument
building and synchronization; a speedup can never be overhead removed from one
side only. Eager is the model's own forward, the reference users compare with.

Three numbers per call, each the median or mean over `reps` calls
(docs/bench.md, "How times are measured"):
- `device_ms`: CUDA events around the call with the host's enqueue hidden behind
  a calibrated spin and L2 flushed first (timing.time_interleaved's `event`
  time) — the GPU's time for one call, gaps between kernels included.
- `kernel_ms`: the sum of the call's kernel durations as CUPTI records them
  (torch.profiler), calls back to back; split into Triton and vendor kernels.
- `wall_ms`: host time from the call to the end of a device-wide synchronize,
  the device idle before it — what one call costs a user's loop.
When wall_ms is much larger than kernel_ms the host (Python, guards, launches)
dominates; the engine marks such rows rather than count a device-time gain as a
user-visible one.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

import torch

from ..bundle_state import (compiled_candidates, eager_need, eager_on_device, get_bundle, loaded_bundles, model_runner,
                            run_need, stitched_modules)
from ..measure import memory, timing
from ..protocol import op
from .gpu_ops import Switch


def _wall_times(fns, prepare, reps: int) -> list[float]:
    """Median host wall time of each fn, interleaved; the device is idle when each call starts."""
    out = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            prepare[i]()
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            out[i].append((time.perf_counter() - t) * 1e3)
    return [statistics.median(xs) for xs in out]


def _kernel_times(fn, prepare, reps: int, triton_names: set[str], warmup: int = 3) -> dict:
    """Per call: the sum of kernel durations (CUPTI through torch.profiler), Triton vs vendor."""
    from torch.profiler import ProfilerActivity, profile

    prepare()
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return sum_kernels(prof.events(), reps, triton_names)


def sum_kernels(events, reps: int, triton_names: set[str]) -> dict:
    """Per call, from profiler events: every CUDA kernel's duration summed, Triton (by name) vs the rest."""
    per_name: dict[str, float] = defaultdict(float)
    launches = 0
    for evt in events:
        if evt.device_type == torch.autograd.DeviceType.CUDA:
            us = evt.time_range.elapsed_us()
            if us > 0:
                per_name[evt.name] += us / 1000.0
                launches += 1
    triton = sum(ms for name, ms in per_name.items() if name in triton_names) / reps
    total = sum(per_name.values()) / reps
    return {"kernel_ms": total, "triton_ms": triton, "vendor_ms": total - triton, "kernels_per_call": launches / reps}


@op("bench_times")
def bench_times(req: dict) -> dict:
    """Eager, torch.compile and optimized (`sources`: one module text per graph; absent or equal to
    the baseline's: no optimized entry), timed side by side. CPU mode: `measured: false`."""
    state = get_bundle(req)
    if state.device != "cuda":
        return {"measured": False, "reason": "CPU mode: times are not measured"}
    return side_by_side(state, req)


def side_by_side(state, req: dict) -> dict:
    """bench_times' measurement (CUDA); separate so its plumbing can be exercised with a stand-in timer."""
    reps = int(req.get("reps", 30))
    changed = "sources" in req and any(s is not None and s != b for s, b in zip(req["sources"], state.sources))
    optimized = stitched_modules(state, req) if changed else list(state.modules)
    switches = [Switch([base, new]) for base, new in zip(state.modules, optimized)]
    # Room for the largest run it makes (the eager model's temporaries, a max pool's int64 indices,
    # are not in the compiled run's need) and the L2 flush buffer: held state moves off first.
    # The eager model is timed only where its run fits the memory plan's soft target: one whose own
    # temporaries pass it (a half-precision norm upcast whole) would set the job's peak here alone.
    timed_eager = eager_on_device(state)
    # The eager model is timed after an L2 flush like the others only where its run and the flush buffer together
    # fit the soft target: a 114 MB BCE's eager run (a whole-size fp16 intermediate beside the inputs) and the
    # 100 MiB flush set the job's peak at 3.15x torch.compile's (H100, session 38). Otherwise it is timed apart
    # with the L2 as its previous call left it, and says so; torch.compile and optimized keep their flush.
    flush = timing.flush_bytes()
    eager_flushed = timed_eager and memory.fits_after_spill(eager_need(state) + flush)
    eager_run = run_need(state, "eager") + (flush if eager_flushed else 0) if timed_eager else 0
    memory.reserve(max(run_need(state) + flush, eager_run), "the bench's side-by-side timing")
    compiled = model_runner(state, switches)
    # Eager reads the compiled runs' own input copies: a second copy of GB-sized inputs was the largest
    # part of the bench's peak memory (docs/memory.md); both sides read, neither writes, the inputs.
    model, inputs = compiled.model, compiled.inputs

    def eager():
        with torch.no_grad():
            return model(*inputs)

    def select(which: int):
        def prepare():  # outside every timed region
            for s in switches:
                s.current = which
        return prepare

    names = ["eager", "compiled"] + (["optimized"] if changed else [])
    fns = [eager, compiled] + ([compiled] if changed else [])
    prepare = [lambda: None, select(0)] + ([select(1)] if changed else [])
    triton_sets = [set(), {n for m in state.modules for n in m.__kernel_vars__.values()},
                   {n for m in optimized for n in m.__kernel_vars__.values()}]
    if not timed_eager:
        names, fns, prepare, triton_sets = names[1:], fns[1:], prepare[1:], triton_sets[1:]
    for fn, prep in zip(fns, prepare):  # the first call compiles (Dynamo, AOT): not part of any warm-up
        prep()
        fn()
    torch.cuda.synchronize()
    out = {"measured": True, "reps": reps}
    if not timed_eager:
        out["eager"] = {"not_timed": f"its run needs {memory.gib(eager_need(state))}, above what the memory "
                                     f"plan's soft target leaves ({memory.gib(memory.target())}, docs/memory.md)"}
    groups = [(names, fns, prepare, triton_sets, reps, True)]
    eager_reps = _eager_reps(eager, reps) if timed_eager else reps
    if timed_eager and (eager_reps < reps or not eager_flushed):
        # An eager model of seconds a call (PyTorch's softmax over a long outer dimension: 2.4 s) made
        # the bench's three timings of ~100 calls take 4 minutes of a 60 s problem. Eager is timed
        # apart with fewer calls (or without the flush); torch.compile and optimized stay interleaved, as
        # they are compared.
        groups = [(names[:1], fns[:1], prepare[:1], triton_sets[:1], eager_reps, eager_flushed),
                  (names[1:], fns[1:], prepare[1:], triton_sets[1:], reps, True)]
    for g_names, g_fns, g_prepare, g_sets, g_reps, g_flush in groups:
        # An eager call of a second or more is warm after one call (it compiled nothing); its warm-ups were
        # half of the 29 s the bench spent on a 1.5 s eager softmax (benchmarks/RESULTS.md, session 37).
        warm = min(5, g_reps) if g_reps == reps else 1
        device = timing.time_interleaved(g_fns, reps=g_reps, prepare=g_prepare, warmup=warm, flush_l2=g_flush)
        wall = _wall_times(g_fns, g_prepare, g_reps)
        for i, name in enumerate(g_names):
            entry = {"device_ms": device[i]["median_ms"], "device": device[i], "wall_ms": wall[i]}
            entry.update(_kernel_times(g_fns[i], g_prepare[i], g_reps, g_sets[i], warmup=min(3, warm)))
            if g_reps != reps:
                entry["reps"] = g_reps
            if not g_flush:
                entry["l2"] = (f"not flushed: its run ({memory.gib(eager_need(state))}) and the flush buffer "
                               f"({memory.gib(flush)}) together pass the memory plan's soft target")
            out[name] = entry
    return out


# What the eager model's timings may take in all (about three times its calls: device, wall and kernel
# times, each over the same count), when a call of it is slow.
EAGER_SECONDS = 6.0


def _eager_reps(eager, reps: int) -> int:
    """How many calls each of eager's timings makes: `reps`, or fewer (at least 3) when `reps` calls
    of it would take more than a third of EAGER_SECONDS."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    eager()
    torch.cuda.synchronize()
    once = time.perf_counter() - t
    return reps if once * reps <= EAGER_SECONDS / 3 else max(3, int(EAGER_SECONDS / 3 / once))


@op("forget_bundles")
def forget_bundles(req: dict) -> dict:
    """Drops every loaded bundle, compiled candidate and Dynamo cache entry, and returns cached GPU
    memory: one worker serves a whole suite, and one problem's tensors must not crowd the next."""
    from ..measure import memory_history

    memory_history.job_ended(", ".join(sorted(map(str, loaded_bundles))) or "no bundle")
    n = len(loaded_bundles)
    loaded_bundles.clear()
    compiled_candidates.clear()
    torch._dynamo.reset()
    timing.release()
    memory.set_compiled_peak(None)
    memory.release_cache()
    memory.release_host_cache()
    return {"forgotten": n, "held_bytes": memory.held_bytes(), "in_use_bytes": memory.in_use()}
