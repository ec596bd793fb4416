"""`capture` inside a running worker (docs/protocol.md): `kernelopt bench` can capture each problem in
the worker that then optimizes it, where torch, Triton, CUDA and Inductor's compile pool are already
up. A capture process of its own spent 10 of its 19-23 s starting and importing on the H100 (its
own clock said 9-12 s; benchmarks/RESULTS.md, session 29)."""

from __future__ import annotations

from ..protocol import device, op


@op("capture")
def capture_op(req: dict) -> dict:
    """{problem, out, mode?, seed?, dtype?, force?, autotune_cache?} -> the bundle written at `out`,
    as `python -m kernelopt.worker.capture` writes it (CPU mode: Triton kernels for the interpreter).
    A failure is the capture's own one-line error; nothing of the capture stays in the worker."""
    from ..bundle_state import dynamo_reset
    from ..capture.capture import capture
    from ..measure import memory

    try:
        meta = capture(req["problem"], req["out"], req.get("mode", "default"), int(req.get("seed", 0)), device(),
                       req.get("dtype"), bool(req.get("force", False)),
                       autotune_cache=bool(req.get("autotune_cache", True)),
                       cpu_kernels="triton" if device() == "cpu" else "cpp")
    finally:
        # Dynamo's caches hold the model it compiled (its weights, on the device): emptied, and the
        # allocator's blocks returned, so the problem's own runs start from what the worker held.
        dynamo_reset()
        memory.release_cache()
    return {"bundle": str(req["out"]), "graphs": len(meta["graphs"]), "eager_vs_compiled": meta["eager_vs_compiled"],
            "capture_seconds": meta["capture_seconds"], "capture_stages": meta.get("capture_stages", {})}
