"""KERNELOPT_MEMORY_HISTORY=DIR: where a job's device peak comes from, down to the line.

The memory trace (KERNELOPT_MEMORY_TRACE) says which request reached a peak; a transient inside
one (a fingerprint's int64 temporaries, a comparison's float64 slices) is only visible in the
allocator's own history. With this set, the worker records every allocation's Python stack from
the start of each job (memory op `reset_peak`) and, when the job's bundles are forgotten, replays
the history to the moment the most bytes were allocated and writes what was alive then, grouped by
the worker's own frames, to DIR/peaks-PID.txt (docs/memory.md). Diagnostic only: recording costs
time and host memory.
"""

from __future__ import annotations

import os
from collections import defaultdict

import torch

_DIR = os.environ.get("KERNELOPT_MEMORY_HISTORY")
_MAX_ENTRIES = 400_000
_jobs = 0


def enabled() -> bool:
    return bool(_DIR) and torch.cuda.is_available()


def start() -> None:
    """Starts a fresh history (the previous job's is dropped)."""
    if not enabled():
        return
    torch.cuda.memory._record_memory_history(None)
    torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                             max_entries=_MAX_ENTRIES)


def _where(frames: list) -> str:
    """The innermost three of the worker's own frames (file:line function), else the innermost frame."""
    own = [f for f in frames if "kernelopt" in f.get("filename", "")]
    pick = own[:3] or frames[:1]
    return " < ".join(f"{os.path.basename(f['filename'])}:{f['line']} {f['name']}" for f in pick)


def summarize(events: list, start_bytes: int, top: int = 12) -> str:
    """The peak of allocated bytes over `events` (the allocator's trace) and what was alive at it."""
    alive: dict[int, tuple[int, str]] = {}
    cur = best = start_bytes
    best_alive: dict[int, tuple[int, str]] = {}
    for e in events:
        action, addr, size = e.get("action"), e.get("addr"), e.get("size", 0)
        if action == "alloc":
            alive[addr] = (size, _where(e.get("frames", [])))
            cur += size
            if cur > best:
                best, best_alive = cur, dict(alive)
        elif action == "free_completed":
            cur -= size
            alive.pop(addr, None)
    groups: dict[str, int] = defaultdict(int)
    for size, where in best_alive.values():
        groups[where] += size
    mib = 1 << 20
    head = (f"peak {best / mib:.0f} MiB ({start_bytes / mib:.0f} MiB in use when the history began; "
            f"{(best - start_bytes) / mib:.0f} MiB allocated since and alive at the peak):")
    lines = [head]
    for where, size in sorted(groups.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {size / mib:9.1f} MiB  {where}")
    return "\n".join(lines)


_start_bytes = 0


def job_started() -> None:
    global _start_bytes
    if enabled():
        start()
        _start_bytes = torch.cuda.memory_allocated()


def job_ended(label: str) -> None:
    """Writes the finished job's peak and its alive allocations to DIR/peaks-PID.txt."""
    global _jobs
    if not enabled():
        return
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(None)
    events = snap.get("device_traces", [[]])[0]
    _jobs += 1
    os.makedirs(_DIR, exist_ok=True)
    with open(os.path.join(_DIR, f"peaks-{os.getpid()}.txt"), "a") as f:
        f.write(f"== job {_jobs} ({label}), {len(events)} events"
                f"{' (history full: the earliest were dropped)' if len(events) >= _MAX_ENTRIES else ''}\n")
        f.write(summarize(events, _start_bytes) + "\n\n")
