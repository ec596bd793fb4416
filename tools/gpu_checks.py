#!/usr/bin/env python3
"""Issue-3 checks on the GPU machine, printed as tables for benchmarks/RESULTS.md.

    python tools/gpu_checks.py [--bundles corpus/*_large] [--json OUT.json]

1. Ceilings: device copy bandwidth, bf16/fp16/fp32 matmul rates.
2. Per bundle: the baseline module against eager; per kernel, its median time
   alone (real recorded arguments, L2 flushed, in-place buffers restored)
   against its median time inside the module (torch.profiler); the sum of all
   kernel times (Triton + vendor) against the module's GPU time.
3. Containment: a candidate kernel with an illegal memory access makes the
   worker say `fatal`; the worker is replaced and the next request succeeds.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("KERNELOPT_DEVICE", "cuda")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from kernelopt.worker import bundle_state  # noqa: E402
from kernelopt.worker.measure import ceilings  # noqa: E402
from kernelopt.worker.measure.launches import kernel_decls  # noqa: E402
from kernelopt.worker.ops import bundle_ops, gpu_ops  # noqa: E402


def check_bundle(bundle: str) -> dict:
    req = {"bundle": bundle}
    base = bundle_ops.run_baseline(req)
    prof = gpu_ops.profile(dict(req, reps=20))
    in_module = {k["name"]: k for k in prof["kernels"]}
    rows = []
    for rec in bundle_state.get_bundle(req).launches:
        if rec.index != 0:
            continue
        name = bundle_state.get_bundle(req).kernel_name(rec.graph, rec.kernel)
        alone = gpu_ops.time_kernel(dict(req, graph=rec.graph, kernel=name, reps=50))["baseline"]
        inside = in_module.get(name, {}).get("median_ms")
        rows.append({"kernel": name, "alone_ms": alone["median_ms"], "alone_p20": alone["p20_ms"],
                     "alone_p80": alone["p80_ms"], "in_module_ms": inside,
                     "ratio": alone["median_ms"] / inside if inside else None})
    return {"bundle": bundle, "match": base["match"], "max_rel": max(
        (o.get("max_rel", 0) for o in base["comparison"]["outputs"]), default=0),
        "module_ms": prof["module"]["median_ms"], "kernel_sum_ms": prof["kernel_sum_ms"],
        "triton_ms": prof["triton_ms"], "vendor_ms": prof["vendor_ms"],
        "explained": prof["kernel_sum_ms"] / prof["module"]["median_ms"], "kernels": rows}


def containment(bundle: str) -> dict:
    """Drives real worker processes the way the engine's supervisor does (kill + restart on fatal)."""
    env = dict(os.environ, KERNELOPT_DEVICE="cuda", PYTHONPATH=str(REPO / "python"))

    def start():
        return subprocess.Popen([sys.executable, "-m", "kernelopt.worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)

    def ask(p, **req):
        p.stdin.write(json.dumps(dict(req, id=1)) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        return json.loads(line) if line else {"ok": False, "failure": "crashed"}

    name, source = next(iter(kernel_decls((Path(bundle) / "module_0.py").read_text()).values()))
    store = source.rindex("tl.store(")
    bad = source[:store] + "tl.store(" + source[store + 9:].replace(" + (", " + 1099511627776 + (", 1)
    p = start()
    first = ask(p, op="run_kernel", bundle=bundle, kernel=name, source=bad)
    os.killpg(p.pid, 9) if first.get("fatal") or not first.get("ok") else None
    p.wait()
    p2 = start()
    second = ask(p2, op="run_kernel", bundle=bundle, kernel=name)
    p2.stdin.close()
    p2.wait(timeout=60)
    return {"kernel": name, "bad_reply": {k: first.get(k) for k in ("ok", "fatal", "failure", "error")},
            "after_replacement_ok": second.get("ok"), "after_replacement_match": second.get("match")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundles", nargs="*", default=sorted(glob.glob(str(REPO / "corpus" / "*_large"))))
    ap.add_argument("--json")
    args = ap.parse_args()
    t0 = time.time()
    out = {"ceilings": ceilings.measure(), "bundles": [], "containment": None}
    c = out["ceilings"]
    print(f"ceilings: copy {c['copy_bytes_per_s'] / 1e12:.2f} TB/s; matmul " +
          ", ".join(f"{k} {v / 1e12:.0f} TFLOP/s" for k, v in c["matmul_flops_per_s"].items()), flush=True)
    for b in args.bundles:
        try:
            r = check_bundle(b)
        except Exception as e:  # a row with its reason; the run goes on
            r = {"bundle": b, "error": f"{type(e).__name__}: {e}"}
        out["bundles"].append(r)
        if "error" in r:
            print(f"{Path(b).name}: ERROR {r['error']}", flush=True)
            continue
        print(f"\n{Path(b).name}: matches eager={r['match']} (max_rel {r['max_rel']:.2e}); module {r['module_ms']:.4f} ms, "
              f"kernel sum {r['kernel_sum_ms']:.4f} ms (triton {r['triton_ms']:.4f}, vendor {r['vendor_ms']:.4f}), "
              f"explained {100 * r['explained']:.1f}%", flush=True)
        print(f"  {'kernel':60s} {'alone ms':>10s} {'[p20, p80]':>20s} {'in module ms':>13s} {'alone/in':>9s}")
        for k in r["kernels"]:
            ratio = f"{k['ratio']:.3f}" if k["ratio"] else "-"
            inside = f"{k['in_module_ms']:.4f}" if k["in_module_ms"] else "-"
            print(f"  {k['kernel']:60s} {k['alone_ms']:10.4f} [{k['alone_p20']:.4f}, {k['alone_p80']:.4f}] "
                  f"{inside:>13s} {ratio:>9s}")
    if args.bundles:
        out["containment"] = containment(args.bundles[0])
        print(f"\ncontainment: {json.dumps(out['containment'])}")
    print(f"\ntotal {time.time() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
