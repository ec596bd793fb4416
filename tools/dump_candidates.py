#!/usr/bin/env python3
"""Dump every candidate the built-in coder proposes, to check that a refactoring changed nothing.

    python tools/dump_candidates.py OUT [BUNDLE ...] [--no-corpus] [--device cpu] [--jobs 1]
                                        [--timeout 600] [--bin PATH]
    python tools/dump_candidates.py --compare A B

The first form runs `kernelopt candidates BUNDLE --out OUT/<label>` (docs/testing.md) on every bundle of
corpus/ (corpus/*/meta.json) and on each BUNDLE given, e.g. a suite run's `RUN/problems/*/bundle`. A bundle's
label is its directory's name, or its parent's when the directory is called `bundle`. Each OUT/<label> holds
the candidates' sources (<kernel>/<NNN>-<origin>.py) and manifest.json (plan, origin, description, launch
config and hash of each); a bundle whose dump failed holds ERROR.txt with the engine's exit code and last
error line instead. OUT/SHA256SUMS lists the sha256 of every file. Nothing in OUT depends on the time or on
where the bundles or OUT lie, so two dumps of an unchanged engine are byte-identical. The worker is this
checkout's (python/ goes first on PYTHONPATH); the engine is --bin, else $KERNELOPT_BIN, else
build/engine/kernelopt, else `kernelopt` on PATH. Exit status: 0 when every bundle was dumped, 1 otherwise.

The second form compares two dumps and prints each bundle and kernel whose candidates or plan differ (files
only in one dump, files whose bytes differ, the kernel's manifest entry). Exit status: 0 when identical,
1 when anything differs.

Run it before and after each step of a refactoring and compare:

    python tools/dump_candidates.py /tmp/before            # on the commit before the step
    python tools/dump_candidates.py /tmp/after             # after it (rebuild the engine first)
    python tools/dump_candidates.py --compare /tmp/before /tmp/after

CPU mode (the default) records the launches in Triton's interpreter: nothing is timed, so the dump is
reproducible. With --device cuda the launch records carry the autotuner's choices, which timing decides.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"


def engine_binary(given: str | None) -> str:
    for cand in (given, os.environ.get("KERNELOPT_BIN"), str(REPO / "build/engine/kernelopt"), shutil.which("kernelopt")):
        if cand and os.path.exists(cand):
            return cand
    sys.exit("dump_candidates: kernelopt binary not found; build it, or pass --bin / set KERNELOPT_BIN")


def label_of(bundle: Path) -> str:
    bundle = bundle.resolve()
    return bundle.parent.name if bundle.name == "bundle" else bundle.name


def dump_one(binary: str, bundle: Path, out: Path, args) -> tuple[bool, float, int]:
    """One bundle into `out`; returns (ok, seconds, candidates written)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "python"), os.environ.get("PYTHONPATH")])))
    cmd = [binary, "candidates", str(bundle), "--out", str(out), "--device", args.device, "--timeout", str(args.timeout),
           "--quiet"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - t0
    if r.returncode != 0:
        # Only the error line and exit code: a traceback's paths and addresses would differ between dumps.
        lines = [ln for ln in r.stderr.splitlines() if "error" in ln] or r.stderr.splitlines() or ["(no output)"]
        out.mkdir(parents=True, exist_ok=True)
        (out / "ERROR.txt").write_text(f"exit {r.returncode}\n{lines[-1].replace(str(bundle), '<bundle>')}\n")
        return False, seconds, 0
    manifest = json.loads((out / "manifest.json").read_text())
    return True, seconds, sum(len(k["candidates"]) for k in manifest["kernels"])


def dump(args) -> int:
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        sys.exit(f"dump_candidates: {out}: exists and is not empty; give a new directory")
    out.mkdir(parents=True, exist_ok=True)
    bundles = [] if args.no_corpus else sorted(p.parent for p in CORPUS.glob("*/meta.json"))
    for b in map(Path, args.bundles):
        if not (b / "meta.json").is_file():
            sys.exit(f"dump_candidates: {b}: not a bundle directory (no meta.json)")
        bundles.append(b)
    labels: dict[str, Path] = {}
    for b in bundles:
        label = label_of(b)
        if label in labels:
            sys.exit(f"dump_candidates: {b} and {labels[label]} would both be dumped as {label}")
        labels[label] = b
    if not labels:
        sys.exit("dump_candidates: no bundles to dump")
    binary = engine_binary(args.bin)
    print(f"dumping the candidates of {len(labels)} bundle(s) with {binary} ({args.device}) into {out}", flush=True)
    t0 = time.monotonic()
    failed, total = [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(dump_one, binary, b, out / label, args): label for label, b in labels.items()}
        for f in concurrent.futures.as_completed(futures):
            label = futures[f]
            ok, seconds, n = f.result()
            total += n
            if not ok:
                failed.append(label)
            detail = f"{n} candidate(s)" if ok else (out / label / "ERROR.txt").read_text().splitlines()[-1]
            print(f"  {label}: {'ok' if ok else 'FAILED'}, {seconds:.1f} s, {detail}", flush=True)
    sums = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(out).as_posix()}"
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != "SHA256SUMS"]
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    print(f"{total} candidate(s) from {len(labels) - len(failed)} bundle(s) in {time.monotonic() - t0:.1f} s"
          + (f"; failed: {', '.join(sorted(failed))}" if failed else ""))
    return 1 if failed else 0


def files_of(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}


def kernel_entries(bundle: Path) -> dict[str, dict]:
    m = bundle / "manifest.json"
    return {k["dir"]: k for k in json.loads(m.read_text())["kernels"]} if m.is_file() else {}


def manifest_head(bundle: Path) -> dict:
    m = bundle / "manifest.json"
    return {k: v for k, v in json.loads(m.read_text()).items() if k != "kernels"} if m.is_file() else {}


def compare(a: Path, b: Path) -> int:
    for d in (a, b):
        if not d.is_dir():
            sys.exit(f"dump_candidates: {d}: no such dump directory")
    diffs = []
    bundles_a = {p.name for p in a.iterdir() if p.is_dir()}
    bundles_b = {p.name for p in b.iterdir() if p.is_dir()}
    for name in sorted(bundles_a ^ bundles_b):
        diffs.append(f"{name}: only in {a if name in bundles_a else b}")
    kernels = candidates = 0
    for name in sorted(bundles_a & bundles_b):
        fa, fb = files_of(a / name), files_of(b / name)
        ka, kb = kernel_entries(a / name), kernel_entries(b / name)
        kernels += len(ka)
        candidates += sum(1 for f in fa if f.endswith(".py"))
        if "ERROR.txt" in fa or "ERROR.txt" in fb:
            if fa != fb:
                diffs.append(f"{name}: the dump failed in {'both, differently' if 'ERROR.txt' in fa and 'ERROR.txt' in fb else a if 'ERROR.txt' in fa else b}")
            continue
        for kdir in sorted(set(ka) | set(kb)):
            if kdir not in ka or kdir not in kb:
                diffs.append(f"{name}/{kdir}: kernel only in {a if kdir in ka else b}")
                continue
            what = []
            mine = lambda files: {f for f in files if f.startswith(kdir + "/")}  # noqa: E731
            only_a, only_b = mine(fa) - mine(fb), mine(fb) - mine(fa)
            changed = sorted(f for f in mine(fa) & mine(fb) if fa[f] != fb[f])
            if only_a:
                what.append(f"only in A: {', '.join(sorted(only_a))}")
            if only_b:
                what.append(f"only in B: {', '.join(sorted(only_b))}")
            if changed:
                what.append(f"bytes differ: {', '.join(changed)}")
            if ka[kdir] != kb[kdir]:
                keys = sorted(k for k in set(ka[kdir]) | set(kb[kdir]) if ka[kdir].get(k) != kb[kdir].get(k))
                what.append(f"manifest differs: {', '.join(keys)}")
            if what:
                diffs.append(f"{name}/{kdir}: {'; '.join(what)}")
        if list(ka) != list(kb):
            diffs.append(f"{name}: the kernels' order (the search's ranking) differs")
        # Anything else (a file outside every kernel's directory, the manifest beside its kernels) is compared whole.
        if manifest_head(a / name) != manifest_head(b / name):
            diffs.append(f"{name}/manifest.json: differs outside its kernels")
        rest = {f for f in set(fa) | set(fb) if "/" not in f and f != "manifest.json"}
        for f in sorted(rest):
            if fa.get(f) != fb.get(f):
                diffs.append(f"{name}/{f}: differs")
    for line in diffs:
        print(line)
    if diffs:
        print(f"{len(diffs)} difference(s) between {a} and {b}")
        return 1
    print(f"identical: {len(bundles_a)} bundle(s), {kernels} kernel(s), {candidates} candidate(s)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("out", nargs="?", help="new or empty directory for the dump")
    ap.add_argument("bundles", nargs="*", help="more bundle directories (e.g. a suite run's problems/*/bundle)")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two dumps instead")
    ap.add_argument("--no-corpus", action="store_true", help="only the bundles given, not corpus/")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="worker that records the launches")
    ap.add_argument("--jobs", type=int, default=1, help="bundles dumped at a time (one worker each)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one worker request may take")
    ap.add_argument("--bin", help="the kernelopt binary")
    args = ap.parse_args()
    if args.compare:
        if args.out:
            ap.error("--compare takes the two dumps only")
        return compare(*map(Path, args.compare))
    if not args.out:
        ap.error("give OUT, the directory to dump into, or --compare A B")
    return dump(args)


if __name__ == "__main__":
    sys.exit(main())
