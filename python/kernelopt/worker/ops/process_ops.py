"""The worker's operations (docs/protocol.md). Each takes the request dict and
returns the reply payload; protocol.py turns exceptions into failure records."""

from __future__ import annotations

import os
import platform

from kernelopt.worker.protocol import PROTOCOL_VERSION, device, op

@op("hello")
def hello(req: dict) -> dict:
    import torch

    info = {
        "protocol": PROTOCOL_VERSION,
        "pid": os.getpid(),
        "device": device(),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda},
    }
    try:
        import triton

        info["versions"]["triton"] = triton.__version__
    except ImportError:
        info["versions"]["triton"] = None
    if device() == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA GPU visible to the worker; run on a GPU machine or pass --device cpu")
        _start_compile_pool()
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = {"name": p.name, "capability": [p.major, p.minor], "sm_count": p.multi_processor_count,
                       "l2_bytes": getattr(p, "L2_cache_size", None), "memory_bytes": p.total_memory}
    return info


def _start_compile_pool() -> None:
    """Starts Inductor's Triton compile pool now, in the background, and keeps it up.

    AsyncCompile compiles in this process, one kernel after another, until its pool answers;
    the pool starts only on first use and shuts down after a minute idle (torch 2.11's
    async_compile.py). Screening compiles dozens of candidates at a time, each a few seconds
    alone: a cold pool builds the first ones here, in turn. (Whether this is what made 20 s
    budgets run 90-220 s on the H200 is not yet measured: the screen reply's `seconds` says.)"""
    try:
        from torch._inductor import config
        from torch._inductor.async_compile import AsyncCompile, get_compile_threads

        config.quiesce_async_compile_pool = False
        if get_compile_threads() > 1:
            AsyncCompile.warm_pool()
            AsyncCompile.wakeup()
    except Exception:  # noqa: BLE001 - without a pool, candidates compile here, only slower
        pass


@op("ceilings")
def ceilings(req: dict) -> dict:
    if device() != "cuda":
        return {"measured": False, "reason": "CPU mode measures no ceilings"}
    from kernelopt.worker.measure import ceilings as c

    return {"measured": True, **c.measure()}


@op("echo")
def echo(req: dict) -> dict:
    """Round-trips a payload; the supervisor's tests and health checks use it."""
    return {"payload": req.get("payload")}


@op("memory")
def memory_op(req: dict) -> dict:
    """The memory plan's figures (docs/memory.md): bytes in use, held between requests, the peak
    since the last reset, free, the budget. `reset_peak` starts a new peak after answering (the
    main job sends it first); `budget_bytes` sets the worker's budget and `target_ratio` the soft
    target's ratio to torch.compile's peak (null: back to the defaults)."""
    from kernelopt.worker.measure import memory, memory_history

    if "budget_bytes" in req:
        memory.set_budget(req["budget_bytes"])
    if "target_ratio" in req:
        memory.set_target_ratio(req["target_ratio"])
    out = memory.report()
    if req.get("reset_peak"):
        memory.reset_peak()
        memory_history.job_started()
    return out
