"""GPU timing by the rules in docs/design.md ("Measuring on the GPU"): warm up, CUDA events
around each repetition, the L2 flushed before each one, the whole device
synchronized (so work on any stream is counted), median with the 20th/80th
percentiles, and several functions interleaved repetition by repetition so
that clock and thermal drift hit them alike.

The GPU is kept busy while the host enqueues the timed work: a calibrated
spin kernel (torch.cuda._sleep) runs first, long enough to cover the host's
launch time measured during warm-up, so the start event fires right before
the work and the interval is device time only, not Python launch overhead
(which is reported separately as wall time where it matters).

Two intervals per repetition: `event` (start/end events on the current stream:
the kernel time proper) and `synced` (the end event recorded only after a
device-wide synchronize, so it also covers work put on any other stream, plus
one host round trip). The cascade compares `event` times and uses `synced` to
catch work hidden on other streams.

`prepare` runs before every repetition outside the timed region: it restores
buffers a kernel writes in place, so every repetition sees the same inputs, and
poisons the kernel's pure outputs, so no repetition can reuse what an earlier
call left there (gpu_ops._timed_launch); for module timing it selects which
modules the shared call path runs (gpu_ops.time_module).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Sequence

# Where the GPU's L2 size is not known: 4x the H200's.
DEFAULT_FLUSH_BYTES = 256 << 20
_flush_buf = None
_flush_size = None
_sleep_cycles_per_ms = None


def flush_bytes() -> int:
    """The L2 flush buffer's size: twice this GPU's L2 (at least 64 MiB). A write of that much evicts
    everything the next timed call could find there (Inductor's own benchmarker writes the L2's size
    once). Every timing reserves it in the memory plan: a fixed 256 MiB took a third of a 0.29 GiB
    problem's job peak (3.0x torch.compile's) in screening, for nothing the H100's 50 MB L2 needs."""
    global _flush_size
    if _flush_size is None:
        try:
            import torch

            l2 = int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)
        except Exception:  # noqa: BLE001 - no CUDA device (CPU mode) or no such property
            l2 = 0
        _flush_size = max(64 << 20, 2 * l2) if l2 > 0 else DEFAULT_FLUSH_BYTES
    return _flush_size


def _flush_l2():
    global _flush_buf
    import torch

    if _flush_buf is None:
        _flush_buf = torch.empty(flush_bytes() // 4, dtype=torch.int32, device="cuda")
    _flush_buf.fill_(0x5A5A5A5A)  # a write of the whole buffer evicts everything else


def release() -> None:
    """Drops the L2 flush buffer (after each measurement, and the suite runner's clean-up between problems)."""
    global _flush_buf
    _flush_buf = None


def _cycles_per_ms() -> float:
    """Calibrates torch.cuda._sleep: spin cycles per millisecond on this GPU."""
    global _sleep_cycles_per_ms
    if _sleep_cycles_per_ms is None:
        import torch

        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # warm-up
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        _sleep_cycles_per_ms = cycles / start.elapsed_time(end)
    return _sleep_cycles_per_ms


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
    host_s = [0.0] * len(fns)  # the longest host-side enqueue time of each function
    for _ in range(warmup):
        for i, (fn, prep) in enumerate(zip(fns, prepare)):
            if prep:
                prep()
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            host_s[i] = max(host_s[i], time.perf_counter() - t)
            torch.cuda.synchronize()
    spin = [int(_cycles_per_ms() * (1.5 * h * 1e3 + 0.05)) for h in host_s]
    event = [[] for _ in fns]
    synced = [[] for _ in fns]
    for _ in range(reps):
        for i, (fn, prep) in enumerate(zip(fns, prepare)):
            if prep:
                prep()
            if flush_l2:
                _flush_l2()
            start, end, after = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            torch.cuda._sleep(spin[i])  # covers the host's enqueue of start, fn and end
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()  # the whole device, every stream
            after.record()
            after.synchronize()
            event[i].append(start.elapsed_time(end))
            synced[i].append(start.elapsed_time(after))
    # The flush buffer is freed with the measurement: kept, its 256 MiB sat in every later request's
    # peak (a third of a 300 MB problem's job). The allocator keeps the block cached, so the next
    # measurement takes it back without a cudaMalloc.
    release()
    out = []
    for ev, sy in zip(event, synced):
        summary = summarize(ev)
        summary["synced"] = summarize(sy)
        out.append(summary)
    return out
