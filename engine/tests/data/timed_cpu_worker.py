"""The real worker in CPU mode (Triton's interpreter, real bundles) whose timing ops answer from a
formula instead of a GPU, so the search's GPU path — screening in batches against the budget, the
fallback note's counts, G4 — runs in CI. Every other op (G1-G3: compile, run, compare) is the real one.

A candidate's time is the baseline's times a ratio fixed by its source: `# fake-ratio: R` in the source
when present, else one from the source's hash in [0.6, 1.4). `time_module` (a region's G4, the
end-to-end gate) answers only for modules carrying `# fake-ratio: R` (the product of those found) and is
the real op otherwise, which measures nothing in CPU mode. Env: FAKE_SCREEN_SLEEP (seconds each screen
request takes), FAKE_LOG (a file that gets one JSON line per timing request: op, number of sources, a screen's compile limit).
"""
import hashlib
import json
import os
import re
import sys
import time

os.environ["KERNELOPT_DEVICE"] = "cpu"
os.environ["TRITON_INTERPRET"] = "1"

from kernelopt.worker.protocol import op, serve  # noqa: E402

BASE_MS = 1.0


def ratio(source: str) -> float:
    m = re.search(r"# fake-ratio: ([0-9.]+)", source)
    if m:
        return float(m.group(1))
    h = int(hashlib.sha256(source.encode()).hexdigest()[:8], 16)
    return 0.6 + 0.8 * (h % 1000) / 1000


def summary(ms: float) -> dict:
    spread = {"median_ms": ms, "min_ms": ms * 0.99, "p20_ms": ms * 0.995, "p80_ms": ms * 1.005, "reps": 10}
    return {**spread, "synced": dict(spread)}


def log(entry: dict) -> None:
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(json.dumps(entry) + "\n")


def register() -> None:
    from kernelopt.worker.ops import bench_ops, bundle_ops, gpu_ops, process_ops, region_ops, search_ops  # noqa: F401

    @op("screen")
    def screen(req):
        log({"op": "screen", "sources": len(req["sources"]), "compile_limit_s": req.get("compile_limit_s")})
        time.sleep(float(os.environ.get("FAKE_SCREEN_SLEEP", "0")))
        return {"measured": True, "baseline": summary(BASE_MS),
                "candidates": [{"ok": True, **summary(BASE_MS * ratio(s))} for s in req["sources"]],
                "seconds": {"compile": 0.0, "run": 0.0}, "parallel_compile": False}

    from kernelopt.worker.ops.gpu_ops import time_module as real_time_module

    @op("time_module")
    def time_module(req):
        sources = req.get("sources") or ([req["source"]] if req.get("source") else [])
        marks = [float(m) for s in sources for m in re.findall(r"# fake-ratio: ([0-9.]+)", s)]
        if not marks:
            return real_time_module(req)
        log({"op": "time_module"})
        r = 1.0
        for m in marks:
            r *= m
        return {"measured": True, "baseline": summary(BASE_MS), "optimized": summary(BASE_MS * r)}

    @op("time_kernel")
    def time_kernel(req):
        log({"op": "time_kernel"})
        out = {"measured": True, "baseline": summary(BASE_MS)}
        if req.get("source") is not None:
            out["candidate"] = summary(BASE_MS * ratio(req["source"]))
        return out


if __name__ == "__main__":
    register()  # before serve(): its imports then find the modules loaded and keep these two handlers
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.exit(serve(sys.stdin, out))
