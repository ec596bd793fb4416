"""Worker operations for the optimizer's search (docs/protocol.md): `screen`
times many candidate sources of one kernel against the original, interleaved,
with few repetitions, to rank them before the full cascade runs on the best.

Candidates are compiled concurrently first (Inductor's compile pool builds the
Triton binaries in parallel processes); a candidate that fails to compile or to
run becomes a record with its error, never a failed request. Screening is a
ranking, not a verdict: a screened time proves nothing until G4 measures it.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

from ..bundle_state import get_bundle
from ..measure import memory, timing
from ..protocol import op
from .bundle_ops import run_baseline
from .gpu_ops import require_gpu, restore_and_poison, timing_args


def _compile_all(name: str, sources: list[str], device: str,
                 limit_s: float | None = None) -> list[tuple[Any, str | None]]:
    """Each source's compiled kernel or its one-line error. With `limit_s`, a source whose compile in the pool
    has not finished that many seconds after the start is a record too: the pool finishes it in the
    background, and the search's budget is not spent waiting (big unrolled windows compile for tens of
    seconds)."""
    from torch._inductor.async_compile import AsyncCompile, get_compile_threads

    t0 = time.perf_counter()
    # Wait for the compile pool the worker started (process_ops._start_compile_pool): until it answers,
    # AsyncCompile compiles each candidate here, in turn.
    if get_compile_threads() > 1 and hasattr(AsyncCompile, "wait_pool_ready"):
        try:
            AsyncCompile.wait_pool_ready(timeout=120)
        except Exception:  # noqa: BLE001 - no pool: compile here
            pass
    ac = AsyncCompile()
    pending: list[Any] = []
    for src in sources:
        try:
            pending.append(ac.triton(name, src, device_str=device))
        except Exception as e:  # noqa: BLE001 - a candidate's failure is data
            pending.append(e)
    out: list[tuple[Any, str | None]] = []
    for p in pending:
        if isinstance(p, Exception):
            out.append((None, _one_line(p)))
            continue
        future = getattr(p, "future", None)  # the pool's concurrent.futures.Future, where there is one
        if limit_s is not None and future is not None:
            left = limit_s - (time.perf_counter() - t0)
            try:
                future.result(timeout=max(0.0, left))
            except concurrent.futures.TimeoutError:
                out.append((None, f"not screened: its compile took more than the {limit_s:.1f} s the budget left"))
                continue
            except Exception:  # noqa: BLE001 - the compile's own error: reported by result_fn below
                pass
        try:
            kernel = p.result() if not hasattr(p, "run") and hasattr(p, "result") else p
            out.append((kernel, None))
        except Exception as e:  # noqa: BLE001
            out.append((None, _one_line(e)))
    return out


def _one_line(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:500] if text else type(e).__name__


@op("screen")
def screen(req: dict) -> dict:
    """{bundle, graph, kernel, launch, sources, reps, poison, compile_limit_s?} -> the baseline's and each
    source's times."""
    state = get_bundle(req)
    if (skip := require_gpu(state)) is not None:
        return skip
    import torch

    if not state.launches:
        run_baseline(req)
    rec = state.launch(req.get("graph", 0), req["kernel"], req.get("launch", 0))
    name = state.kernel_name(rec.graph, rec.kernel)
    t0 = time.perf_counter()
    compiled = _compile_all(name, list(req["sources"]), state.device, req.get("compile_limit_s"))
    t_compile = time.perf_counter() - t0
    # Screening ranks, G4 decides. One set of buffers shared by every candidate (memory stays
    # bounded for large kernels), restored to the recorded inputs and with pure outputs poisoned
    # before each repetition, as G4 times them.
    args, shared = timing_args(state, rec, "screening candidates")
    stream = torch.cuda.current_stream().cuda_stream
    prepare = restore_and_poison(args, rec, tuple(req.get("poison", ())))

    def launch_fn(lau):
        return lambda: lau.run(*args, stream=stream, **rec.kwargs)

    results: list[dict] = [{} for _ in compiled]
    fns: list[Any] = [launch_fn(lau) if lau is not None else None
                      for lau in [getattr(state.modules[rec.graph], rec.kernel)] + [k for k, _ in compiled]]
    preps = [prepare] * len(fns)
    slots = []
    once_base = _launch_ms(fns[0], prepare)
    # A first launch of each candidate outside timing: a launch-time failure (out of shared
    # memory, an illegal instruction) is recorded and the candidate dropped. A second, timed once,
    # drops one far slower than the baseline from the interleaved timing (its one time is its
    # screen time): on a 5 GB kernel, 16 candidates with a few such took 47 s of a 60 s budget.
    for i, (kernel, err) in enumerate(compiled):
        if err is not None:
            results[i] = {"ok": False, "error": err}
            continue
        once = None
        try:
            preps[i + 1]()
            fns[i + 1]()
            torch.cuda.synchronize()
            once = _launch_ms(fns[i + 1], preps[i + 1])
        except Exception as e:  # noqa: BLE001
            results[i] = {"ok": False, "error": _one_line(e)}
            fns[i + 1] = None
        if bad := memory.changed_since(rec.args, shared):
            # The record itself was written: nothing after this can be timed on it (the next request
            # records the launches again). This candidate is refused; those not yet launched are not screened.
            state.launches = []
            results[i] = {"ok": False, "error": f"wrote argument(s) {bad}, which the kernel only reads"}
            for j in range(i + 1, len(compiled)):
                if not results[j]:
                    results[j] = {"ok": False, "error": "not screened: an earlier candidate of the batch wrote "
                                                        "a read-only input (screen it again)"}
            return _screen_reply({"median_ms": once_base, "reps": 1}, results, t0, t_compile)
        if once is None:
            continue
        if far_slower(once, once_base):
            results[i] = {"ok": True, "median_ms": once, "timed_once": True}
        else:
            slots.append(i)
    live = [0] + [i + 1 for i in slots]
    timed = timing.time_interleaved([fns[j] for j in live], reps=req.get("reps", 10),
                                    prepare=[preps[j] for j in live], warmup=2)
    if bad := memory.changed_since(rec.args, shared):  # written inside the timing, not at a first launch
        state.launches = []
        raise RuntimeError(f"a screened candidate wrote argument(s) {bad}, which the kernel only reads; the "
                           "batch's times are not valid (the next request records the launches again)")
    for j, summary in zip(live[1:], timed[1:]):
        results[j - 1] = {"ok": True, **summary}
    return _screen_reply(timed[0], results, t0, t_compile)


def _screen_reply(baseline: dict, results: list[dict], t0: float, t_compile: float) -> dict:
    seconds = {"compile": t_compile, "run": time.perf_counter() - t0 - t_compile}
    return {"measured": True, "baseline": baseline, "candidates": results, "seconds": seconds,
            "parallel_compile": _parallel_compile()}


# A candidate timed once at more than this many times the baseline's one launch, and slower by more
# than SLOW_MARGIN_MS, is not timed further: the margin keeps a microsecond kernel's launch noise
# from dropping a candidate that would have ranked first.
SLOW_FACTOR = 3.0
SLOW_MARGIN_MS = 1.0


def far_slower(once_ms: float, baseline_ms: float) -> bool:
    return once_ms > SLOW_FACTOR * baseline_ms and once_ms > baseline_ms + SLOW_MARGIN_MS


def _launch_ms(fn, prepare) -> float:
    """One launch's device time (CUDA events) after its prepare."""
    import torch

    prepare()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def _parallel_compile() -> bool:
    from torch._inductor.async_compile import AsyncCompile

    try:
        return bool(AsyncCompile.use_process_pool())
    except Exception:  # noqa: BLE001
        return False
