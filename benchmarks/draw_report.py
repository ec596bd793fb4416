#!/usr/bin/env python3
"""Per-family figures of a fresh draw's bench run, as the variant-generator issue states its goal: for each
family, how many rows have at least 1.2x roofline headroom (torch.compile's GPU time over the problem's floor),
how many of those kernelopt optimized, the geomean speedup, and the share of the headroom recovered — by time
(sum of ms saved over sum of ms above the floor) and in log space as the bench's level table counts it (sum of
log speedup over sum of log(torch.compile / floor)), and the ceiling: the geomean speedup if every row reached
its floor (vendor time kept), the most any optimizer of Triton kernels could show. Wrong results and rows below
1.0x are counted apart.

    python3 benchmarks/draw_report.py DRAW/variants.json BENCH_OUT/results.jsonl [--markdown]
    python3 benchmarks/draw_report.py --levels BENCH_OUT/results.jsonl [--markdown]   (a suite run, by level)

DRAW is what `benchmarks/variants.py --out DRAW` wrote; BENCH_OUT is `kernelopt bench DRAW --out BENCH_OUT`
(or a lane's state folder). Rows not yet run (a draw measured over several calls) are listed as missing."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HEADROOM = 1.2


def family_of(variants: dict) -> dict[str, str]:
    """problem name (the file's stem) -> family."""
    return {Path(p["file"]).stem: p["family"] for p in variants["problems"]}


def figures(rows: list[dict]) -> dict:
    """The figures of a set of bench rows (one family, or all)."""
    out = {"rows": len(rows), "wrong": 0, "slower": 0, "headroom_rows": 0, "optimized_of_headroom": 0}
    logs, saved, above, won, avail, reach = [], 0.0, 0.0, 0.0, 0.0, []
    for r in rows:
        if r.get("status") == "error" or not r.get("measured", True):
            continue
        sp = r.get("speedup")
        if sp:
            logs.append(math.log(sp))
            out["slower"] += sp < 1.0
        out["wrong"] += r.get("correct") is False
        base = (r.get("compiled") or {}).get("device_ms")
        floor = r.get("floor_ms")
        if sp and base and floor:
            reach.append(math.log(max(1.0, base / floor)))
        if not (base and floor and sp) or base / floor < HEADROOM:
            continue
        opt = base / sp
        out["headroom_rows"] += 1
        out["optimized_of_headroom"] += r.get("status") == "optimized"
        saved, above = saved + (base - opt), above + (base - floor)
        won, avail = won + math.log(sp), avail + math.log(base / floor)
    out["geomean"] = math.exp(sum(logs) / len(logs)) if logs else None
    out["ceiling"] = math.exp(sum(reach) / len(reach)) if reach else None
    out["recovered_time"] = saved / above if above > 0 else None
    out["recovered_log"] = won / avail if avail > 0 else None
    return out


def report(variants: dict, rows: list[dict]) -> dict:
    fam = family_of(variants)
    by: dict[str, list[dict]] = {f: [] for f in sorted(set(fam.values()))}
    for r in rows:
        f = fam.get(r.get("name", ""))
        if f is None:
            raise SystemExit(f"draw_report: row {r.get('name')!r} is not a problem of this draw; pass the draw's "
                             "own variants.json")
        by[f].append(r)
    done = {r["name"] for r in rows}
    return {"seed": variants.get("seed"), "families": {f: figures(rs) for f, rs in by.items()},
            "all": figures(rows), "missing": sorted(n for n in fam if n not in done)}


def by_level(rows: list[dict]) -> dict:
    """A suite run's figures per level (the groups are the rows' levels; nothing is missing)."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(f"level {r.get('level', '?')}", []).append(r)
    return {"seed": None, "families": {k: figures(v) for k, v in sorted(by.items())}, "all": figures(rows),
            "missing": []}


def markdown(rep: dict) -> str:
    def pct(x):
        return "-" if x is None else f"{100 * x:.0f}%"

    def times(x):
        return "-" if x is None else f"{x:.2f}x"

    head = (f"Draw seed {rep['seed']}: " if rep["seed"] is not None else "") + \
        f"{rep['all']['rows']} rows measured, {len(rep['missing'])} missing."
    lines = [head, "", "| group | rows | >= 1.2x headroom | optimized of those | geomean | ceiling (all at floor) "
             "| headroom recovered (time / log) | wrong | below 1.0x |", "|---|---|---|---|---|---|---|---|---|"]
    for name, f in [*rep["families"].items(), ("all", rep["all"])]:
        lines.append(f"| {name} | {f['rows']} | {f['headroom_rows']} | {f['optimized_of_headroom']} | "
                     f"{times(f['geomean'])} | {times(f['ceiling'])} | "
                     f"{pct(f['recovered_time'])} / {pct(f['recovered_log'])} | {f['wrong']} | {f['slower']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE",
                    help="the draw's variants.json and the bench's results.jsonl (with --levels: results.jsonl only)")
    ap.add_argument("--levels", action="store_true", help="a suite run: group the rows by level, no draw")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table instead of JSON")
    a = ap.parse_args(argv)
    if len(a.files) != (1 if a.levels else 2):
        ap.error("give VARIANTS RESULTS, or --levels RESULTS")
    try:
        variants = None if a.levels else json.loads(Path(a.files[0]).read_text())
        rows = [json.loads(line) for line in Path(a.files[-1]).read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        print(f"draw_report: error: {e}; pass the draw's variants.json and the bench's results.jsonl", file=sys.stderr)
        return 2
    rep = by_level(rows) if a.levels else report(variants, rows)
    print(markdown(rep) if a.markdown else json.dumps(rep, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
