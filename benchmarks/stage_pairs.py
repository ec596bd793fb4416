"""Whether a launch's num_stages changes how Inductor's kernels run: over the report.json files of a bench
run, every pair of config candidates of one kernel that differ only in num_stages, with the ratio of their
screened times. (Triton pipelines a loop on the launch's count only where the loop feeds tl.dot; the config
space varies num_stages only for such kernels since session 11, docs/optimize.md.)

Usage: python3 benchmarks/stage_pairs.py REPORT.json...   (the problems' report.json files of `kernelopt bench`,
e.g. unpacked from tools/gpu_bench_lanes.sh's lane tarballs: problems/level*/*/report.json)
"""
import collections
import json
import statistics
import sys


def pairs(paths):
    for path in paths:
        report = json.load(open(path))
        for k in report.get("kernels", []):
            by_rest = collections.defaultdict(dict)
            for c in k.get("candidates", []):
                if c.get("origin") != "config" or c.get("screen_ratio") is None:
                    continue
                rest = dict(c["config"])
                stages = rest.pop("num_stages", 1)
                by_rest[json.dumps(rest, sort_keys=True)][stages] = c["screen_ratio"]
            for rest, by_stages in by_rest.items():
                if len(by_stages) > 1:
                    ratios = list(by_stages.values())
                    yield max(ratios) / min(ratios) - 1, path, k["name"], rest, by_stages


def main():
    found = sorted(pairs(sys.argv[1:]), key=lambda p: p[0], reverse=True)
    if not found:
        sys.exit("no config candidates differing only in num_stages in the given reports")
    spread = [p[0] for p in found]
    print(f"{len(found)} pairs; spread between stage counts: median {statistics.median(spread):.2%}, "
          f"max {spread[0]:.2%}, above 5%: {sum(s > 0.05 for s in spread)}")
    two = [p[4] for p in found if 1 in p[4] and 2 in p[4]]
    print(f"num_stages=2 screened faster than 1 in {sum(b[2] < b[1] for b in two)} of {len(two)} pairs")
    for s, path, name, rest, by_stages in found[:10]:
        print(f"  {s:6.2%} {path.split('/')[-2]} {name[:48]} {rest} {by_stages}")


if __name__ == "__main__":
    main()
