"""GPU timing by the rules in DESIGN.md ("Measuring"): warm up, CUDA events
around each repetition, the L2 flushed before each one, the whole device
synchronized (so work on any stream is counted), median with the 20th/80th
percentiles, and several functions interleaved repetition by repetition so
that clock and thermal drift hit them alike.

Two intervals per repetition: `event` (start/end events on the current stream:
the kernel time proper) and `synced` (the end event recorded only after a
device-wide synchronize, so it also covers work put on any other stream, plus
one host round trip). The cascade compares `event` times and uses `synced` to
catch work hidden on other streams.

`prepare` runs before every repetition outside the timed region: it restores
buffers a kernel writes in place, so every repetition sees the same inputs.
"""

from __future__ import annotations

import statistics
from typing import Callable, Sequence

_L2_FLUSH_BYTES = 256 << 20  # > 4x the H200's 60 MB L2
_flush_buf = None


def _flush_l2():
    global _flush_buf
    import torch

    if _flush_buf is None:
        _flush_buf = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    _flush_buf.fill_(0x5A5A5A5A)  # a write of the whole buffer evicts everything else


def summarize(times_ms: Sequence[float]) -> dict:
    xs = sorted(times_ms)
    n = len(xs)

    def pct(p):
        return xs[min(n - 1, max(0, round(p * (n - 1))))]

    return {"median_ms": statistics.median(xs), "p20_ms": pct(0.2), "p80_ms": pct(0.8), "min_ms": xs[0],
            "reps": n}


def time_interleaved(fns: Sequence[Callable[[], object]], reps: int = 50, warmup: int = 5,
                     prepare: Sequence[Callable[[], object] | None] | None = None, flush_l2: bool = True) -> list[dict]:
    """Times each of `fns`, interleaved, and returns one summary per function."""
    import torch

    prepare = list(prepare) if prepare else [None] * len(fns)
    for _ in range(warmup):
        for fn, prep in zip(fns, prepare):
            if prep:
                prep()
            fn()
    torch.cuda.synchronize()
    event = [[] for _ in fns]
    synced = [[] for _ in fns]
    for _ in range(reps):
        for i, (fn, prep) in enumerate(zip(fns, prepare)):
            if prep:
                prep()
            if flush_l2:
                _flush_l2()
            start, end, after = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            torch.cuda.synchronize()
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()  # the whole device, every stream
            after.record()
            after.synchronize()
            event[i].append(start.elapsed_time(end))
            synced[i].append(start.elapsed_time(after))
    out = []
    for ev, sy in zip(event, synced):
        summary = summarize(ev)
        summary["synced"] = summarize(sy)
        out.append(summary)
    return out
