"""Kernel files on the GPU (docs/inputs.md): the original launcher against the captured baseline
module and the optimized result, timed interleaved by the project's timer (worker/measure/timing.py: L2
flushed, spin-covered launches, CUDA events, medians), on the same inputs, with the outputs checked.

    python3 benchmarks/kernel_files.py RESULTS_DIR EXAMPLE.py...

RESULTS_DIR/<name> is what `kernelopt optimize EXAMPLE.py --out RESULTS_DIR/<name>` wrote (its
baseline/ holds the captured module). For a Helion file the original is the Helion kernel at the
config capture chose (meta.json's `helion`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from kernelopt.api_kernels import LoadedLauncher
from kernelopt.api import open_result
from kernelopt.worker.measure import timing
from kernelopt.worker.bundle_runner import rebuild_problem


def main(results: Path, files: list[str]) -> None:
    print(f"{'kernel file':28} {'original ms':>12} {'baseline ms':>12} {'optimized ms':>13} {'vs original':>12}  check")
    for f in files:
        name = Path(f).stem
        out = results / name
        if not (out / "meta.json").exists():
            print(f"{name:28} no result in {out}")
            continue
        meta = json.loads((out / "meta.json").read_text())
        model, inputs = rebuild_problem(out, "cuda")
        result = open_result(out)
        optimized = LoadedLauncher(result, "cuda")
        base_result = open_result(out)
        base_result.sources = base_result.baselines
        baseline = LoadedLauncher(base_result, "cuda")
        with torch.no_grad():
            want = model(*inputs)
            got = optimized(*inputs)
        leaves = lambda x: [t for t in torch.utils._pytree.tree_leaves(x) if isinstance(t, torch.Tensor)]  # noqa: E731
        ok = all(torch.allclose(g.float(), w.float(), rtol=1e-3, atol=1e-3) for g, w in zip(leaves(got), leaves(want)))
        # A fallback's result is the baseline module itself: timed once, so two loads of one module
        # (which differed by up to 7% on the H200) never read as a speedup.
        fallback = list(result.sources) == list(base_result.sources)
        runs = [lambda: model(*inputs), lambda: baseline(*inputs)] + ([] if fallback else [lambda: optimized(*inputs)])
        with torch.no_grad():
            times = timing.time_interleaved(runs, reps=100)
        o, b, p = times if not fallback else (*times, times[1])
        print(f"{name:28} {o['median_ms']:12.4f} {b['median_ms']:12.4f} {p['median_ms']:13.4f} "
              f"{o['median_ms'] / p['median_ms']:11.3f}x  {'ok' if ok else 'MISMATCH'}"
              f"  [{meta['input_kind']}{', fallback: the baseline module' if fallback else ''}, "
              f"p20-p80 opt {p['p20_ms']:.4f}-{p['p80_ms']:.4f}]")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
