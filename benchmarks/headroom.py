"""Headroom recovered over a set of `kernelopt optimize` results (issue metric of the optimizer).

For each result directory's report.json: compile = the module's baseline time, optimized = the re-stitched
module's time (both from the end-to-end gate, same call path), floor = the baseline module with every Triton
kernel replaced by its roofline floor (vendor calls and host time kept as they are). Problems whose module sits
at least 1.2x above that floor count; over them the recovered share is

    sum ln(compile / optimized) / sum ln(compile / floor)      (geomean form; the target is >= 0.75)

Usage: python benchmarks/headroom.py RESULT_DIR...   (each holding report.json; missing ones are listed)
"""
import json
import math
import pathlib
import sys


def row(path: pathlib.Path):
    r = json.loads((path / "report.json").read_text())
    m = r.get("module") or {}
    base, opt = m.get("baseline_ms"), m.get("optimized_ms") or m.get("baseline_ms")
    if not base or not opt or r.get("performance_measured") is not True:
        return None
    excess = 0.0
    for k in r.get("kernels", []):
        kb, kf = k.get("baseline_ms"), k.get("floor_ms")
        if kb and kf and kb > kf:
            excess += (kb - kf) * max(1, k.get("calls_per_run") or 1)  # as the bench's floor_ms counts it
    floor = max(base - excess, 1e-9)
    return {"name": path.name, "compile": base, "optimized": opt, "floor": floor}


def main(dirs):
    rows, missing = [], []
    for d in map(pathlib.Path, dirs):
        try:
            x = row(d)
        except (OSError, ValueError):
            x = None
        (rows if x else missing).append(x or d.name)
    num = den = 0.0
    print(f"{'problem':32} {'compile':>9} {'optimized':>9} {'floor':>9} {'c/floor':>8} {'speedup':>8} {'recovered':>9}")
    for x in rows:
        c, o, f = x["compile"], x["optimized"], x["floor"]
        counts = c / f >= 1.2
        rec = math.log(c / o) / math.log(c / f) if counts else float("nan")
        if counts:
            num, den = num + math.log(c / o), den + math.log(c / f)
        print(f"{x['name']:32} {c:9.4f} {o:9.4f} {f:9.4f} {c / f:8.2f} {c / o:8.3f} "
              f"{(f'{rec:9.0%}' if counts else '   (<1.2)')}")
    n = sum(1 for x in rows if x["compile"] / x["floor"] >= 1.2)
    if den > 0:
        print(f"headroom recovered over {n} problem(s) >= 1.2x above floor: {num / den:.0%} (target 75%)")
    else:
        print("no problem sits 1.2x above its floor")
    if rows:
        g = math.exp(sum(math.log(x["compile"] / x["optimized"]) for x in rows) / len(rows))
        print(f"geomean module speedup over {len(rows)} problem(s): {g:.3f}x")
    for name in missing:
        print(f"{name}: no measured report")


if __name__ == "__main__":
    main(sys.argv[1:])
