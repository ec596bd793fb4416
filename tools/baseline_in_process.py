"""A problem file's capture and baseline run in this process, through the worker's own request
handler, printing the whole traceback of a failed request (the engine keeps only its one-line error).

    PYTHONPATH=$PWD/python python3 tools/baseline_in_process.py PROBLEM.py OUT_BUNDLE_DIR

Found why 8 of the suite's 11 level-3 models failed their baseline on the H100 (benchmarks/RESULTS.md,
session 30): the traceback named the recording's isolated check, which the one-line error did not."""

import json
import os
import sys

os.environ.setdefault("KERNELOPT_DEVICE", "cuda")

from kernelopt.worker.ops import bundle_ops, capture_ops  # noqa: E402,F401  (importing registers the ops)
from kernelopt.worker.protocol import handle  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: baseline_in_process.py PROBLEM.py OUT_BUNDLE_DIR", file=sys.stderr)
        return 2
    problem, out = sys.argv[1:]
    for req in ({"op": "capture", "problem": problem, "out": out, "force": True},
                {"op": "run_baseline", "bundle": out}):
        r = handle(req)
        if not r.get("ok"):
            print(f"{req['op']} failed: {r.get('error')}\n{r.get('traceback', '')}", file=sys.stderr)
            return 1
        print(req["op"], json.dumps({k: v for k, v in r.items() if k not in ("id", "ok")})[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
