#!/usr/bin/env python3
"""Capture every example problem into a corpus of bundles (run on the GPU machine).

    python tools/capture_corpus.py OUTDIR [--tar] [--jobs 4] [--timeout 300] [--device cuda]
                                          [--only SUBSTRING ...] [--force]

Each problem in examples/problems is captured in default mode into
OUTDIR/<stem>/; the problems in AUTOTUNED are also captured under
max-autotune-no-cudagraphs into OUTDIR/<stem>__<mode>/ so the corpus holds
Triton template (GEMM) kernels too. One subprocess per capture, so a crash or
hang in one cannot take down the rest. Every capture's full output (with
KERNELOPT_DEBUG=1 tracebacks) is kept in OUTDIR/logs/, the tail of a failure's
output is printed inline, and OUTDIR/summary.json records the outcome, so the
printed output alone is enough to diagnose a failure. --tar packs OUTDIR into
OUTDIR.tar.gz (one file to fetch back). Exit status: 0 when every capture
succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROBLEMS = REPO / "examples" / "problems"
AUTOTUNE_MODE = "max-autotune-no-cudagraphs"
# Small GEMM problems only: max-autotune compiles and benchmarks many templates per GEMM.
AUTOTUNED = ["matmul", "linear_gelu", "bmm_softmax"]
FAILURE_TAIL_LINES = 30

ENV_PROBE = r"""
import json, platform, torch
info = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available()}
try:
    import triton; info["triton"] = triton.__version__
except Exception as e:
    info["triton"] = f"unavailable: {e}"
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    info["gpu"] = f"{p.name} sm_{p.major}{p.minor} x{torch.cuda.device_count()}"
print(json.dumps(info))
"""


def jobs_list(only: list[str]) -> list[tuple[str, str, str]]:
    """(name, problem path, mode) for every capture to run, filtered by --only substrings."""
    jobs = [(p.stem, str(p), "default") for p in sorted(PROBLEMS.glob("*.py"))]
    jobs += [(f"{stem}__{AUTOTUNE_MODE}", str(PROBLEMS / f"{stem}.py"), AUTOTUNE_MODE) for stem in AUTOTUNED]
    return [j for j in jobs if not only or any(s in j[0] for s in only)]


def child_env() -> dict:
    env = dict(os.environ, KERNELOPT_DEBUG="1")  # tracebacks go to the log
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    return env


def run_one(job, outdir: Path, args) -> dict:
    name, problem, mode = job
    cmd = [sys.executable, "-m", "kernelopt.worker.capture", problem, "--out", str(outdir / name),
           "--mode", mode, "--device", args.device, "--force"]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=args.timeout)
        rc, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        output = _text(e.stdout) + _text(e.stderr) + f"\n[capture_corpus] timed out after {args.timeout}s\n"
    seconds = time.monotonic() - started
    (outdir / "logs" / f"{name}.log").write_text(f"$ {' '.join(cmd)}\n{output}", encoding="utf-8")
    result = {"name": name, "problem": Path(problem).name, "mode": mode, "rc": rc, "seconds": round(seconds, 1)}
    if rc == 0:
        result.update(ok=True, **bundle_stats(outdir / name))
    else:
        lines = [line for line in output.splitlines() if line.strip()]
        result.update(ok=False, error=lines[-1] if lines else "(no output)", tail=lines[-FAILURE_TAIL_LINES:])
    return result


def _text(b) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


def bundle_stats(bundle: Path) -> dict:
    """Kernel counts from the generated modules, to spot an empty or unexpected capture at a glance."""
    meta = json.loads((bundle / "meta.json").read_text())
    texts = [(bundle / g["module"]).read_text() for g in meta["graphs"]]
    return {
        "graphs": len(meta["graphs"]),
        "triton_kernels": sum(t.count("async_compile.triton(") for t in texts),
        "template_kernels": sum(t.count("async_compile.triton('triton_tem_") for t in texts),
        "extern_calls": sum(t.count("extern_kernels.") for t in texts),
        "max_rel": meta["eager_vs_compiled"]["max_rel"],
    }


def status_line(r: dict) -> str:
    if r["ok"]:
        return (f"ok    {r['name']:<44} {r['seconds']:6.1f}s graphs={r['graphs']} triton={r['triton_kernels']} "
                f"templates={r['template_kernels']} extern={r['extern_calls']} max_rel={r['max_rel']}")
    return f"FAIL  {r['name']:<44} {r['seconds']:6.1f}s rc={r['rc']} {r['error']}"


def write_tar(outdir: Path) -> Path:
    target = outdir.with_name(outdir.name + ".tar.gz")
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(outdir, arcname=outdir.name)
    os.replace(partial, target)  # never leave a truncated archive under the final name
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--tar", action="store_true", help="also write OUTDIR.tar.gz")
    parser.add_argument("--jobs", type=int, default=4, help="captures run at once (default 4)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per capture (default 300)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--only", nargs="*", default=[], help="capture only names containing one of these")
    parser.add_argument("--force", action="store_true", help="reuse a non-empty OUTDIR, replacing its bundles")
    args = parser.parse_args()

    outdir = args.outdir.resolve()
    if outdir.exists() and any(outdir.iterdir()) and not args.force:
        print(f"capture_corpus: error: {outdir} is not empty; pass --force or choose another OUTDIR", file=sys.stderr)
        return 2
    (outdir / "logs").mkdir(parents=True, exist_ok=True)

    probe = subprocess.run([sys.executable, "-c", ENV_PROBE], env=child_env(), capture_output=True, text=True)
    try:
        environment = json.loads(probe.stdout)
    except json.JSONDecodeError:
        environment = {"probe_failed": (probe.stdout + probe.stderr).strip()[-2000:]}
    print(f"capture_corpus: environment: {json.dumps(environment)}")
    jobs = jobs_list(args.only)
    print(f"capture_corpus: {len(jobs)} captures, {args.jobs} at a time, timeout {args.timeout}s, into {outdir}")

    started = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, job, outdir, args) for job in jobs]
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            results.append(r)
            print(status_line(r), flush=True)
            if not r["ok"]:
                print("\n".join(f"      | {line}" for line in r["tail"]), flush=True)

    results.sort(key=lambda r: r["name"])
    failed = [r for r in results if not r["ok"]]
    summary = {"environment": environment, "seconds": round(time.monotonic() - started, 1), "results": results}
    (outdir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    print(f"\nsummary ({summary['seconds']}s): {len(results) - len(failed)} ok, {len(failed)} failed")
    for r in results:
        print("  " + status_line(r))
    if args.tar:
        print(f"capture_corpus: wrote {write_tar(outdir)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
