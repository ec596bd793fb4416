"""Load a kernelopt result and compare it with the eager model (docs/python_api.md).

    python examples/use_result.py DIR [--device cuda|cpu] [--backend]

DIR is the --out directory of `kernelopt optimize` (a bundle of `kernelopt capture` works too).
The model and inputs are rebuilt from DIR/problem.py with the seed and dtype the result was
captured with; in your own code you pass your own model instead. Without a GPU (or with
--device cpu) the result runs in CPU mode (Triton's interpreter): correct, not fast.

--backend also compiles the model with torch.compile(backend=kernelopt.backend(DIR)) and prints
which graphs the result was applied to (on a CPU Inductor emits C++, so every graph falls back).
Exit status 0 when every output matches the eager model within tolerance.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="result directory (kernelopt optimize --out)")
    parser.add_argument("--device", choices=["cuda", "cpu"], help="default: cuda if a GPU is visible, else cpu")
    parser.add_argument("--backend", action="store_true", help="also run torch.compile with kernelopt.backend(DIR)")
    args = parser.parse_args(argv)

    import torch  # importing torch does not import triton

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        # CPU mode runs Triton kernels in Triton's interpreter, chosen when triton is first imported.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    try:
        import kernelopt.api  # noqa: F401
    except ImportError:  # running from a checkout without `pip install -e .`
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import kernelopt
    from kernelopt.worker.bundle_runner import rebuild_problem

    logging.basicConfig(format="%(name)s: %(message)s")
    logging.getLogger("kernelopt").setLevel(logging.INFO)

    model, inputs = rebuild_problem(args.dir, device)  # your own model and inputs go here
    run = kernelopt.load(args.dir, model, device=device)
    out = run(*inputs)
    with torch.no_grad():
        ref = model(*inputs)
    ok = report("kernelopt.load", out, ref)
    print(f"{run!r}")

    if args.backend:
        torch._dynamo.reset()
        b = kernelopt.backend(args.dir)
        with torch.no_grad():
            compiled_out = torch.compile(model, backend=b)(*inputs)
        for d in b.decisions:
            print(f"  graph {d.graph}: {'applied' if d.applied else 'fell back'}: {d.reason}")
        ok = report("torch.compile(backend=kernelopt.backend)", compiled_out, ref) and ok
    return 0 if ok else 1


def report(what: str, got, want) -> bool:
    """Every output within the project's tolerances (fp32 1e-4, bf16/fp16 1e-2) of the eager model's."""
    import torch
    from torch.utils._pytree import tree_leaves

    ok = True
    for i, (g, w) in enumerate(zip(tree_leaves(got), tree_leaves(want))):
        if not isinstance(w, torch.Tensor):
            same = g == w
            print(f"{what}: output {i}: {g!r} vs {w!r}: {'ok' if same else 'DIFFERENT'}")
            ok &= bool(same)
            continue
        tol = 1e-4 if w.dtype in (torch.float32, torch.float64) or not w.is_floating_point() else 1e-2
        err = (g.double() - w.double()).abs().max().item() if w.numel() else 0.0
        try:
            torch.testing.assert_close(g, w, atol=tol, rtol=tol)
            verdict = "ok"
        except AssertionError:
            verdict, ok = "DIFFERENT", False
        print(f"{what}: output {i} {str(w.dtype).removeprefix('torch.')}{list(w.shape)}: "
              f"max |diff| {err:.3g} (tolerance {tol}): {verdict}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
