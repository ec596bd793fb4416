"""Sanity-run suite problems on a GPU: eager vs torch.compile, one line per problem.

For each problem file: build it as capture does (seeded, on the CPU, then moved), run eager once, compile
with torch.compile(fullgraph=True) and run once, compare the outputs (fp32 and bf16 tolerances), count
the Triton kernels and vendor calls in Inductor's generated code, and time both (triton.testing.do_bench,
median ms). Exits 1 if any problem fails, mismatches, or has no Triton kernel.

    python benchmarks/check_suite.py benchmarks/suite/level2/*.py
    python benchmarks/check_suite.py --small benchmarks/suite/level3/*.py   # SMALL sizes: a quick smoke run
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_info  # noqa: E402

# Error allowed relative to the largest reference magnitude of each output.
TOL = {torch.float32: 1e-3, torch.bfloat16: 3e-2, torch.float16: 1e-2}
INDEX_MISMATCH_OK = 0.01  # integer outputs (top-k indices) may differ on exact ties


def _compare(out, ref) -> tuple[bool, str]:
    outs, refs = suite_info._tensors(out), suite_info._tensors(ref)
    if len(outs) != len(refs):
        return False, f"{len(outs)} outputs vs {len(refs)}"
    worst, ok = 0.0, True
    for o, r in zip(outs, refs):
        if o.shape != r.shape:
            return False, f"shape {tuple(o.shape)} vs {tuple(r.shape)}"
        if not r.is_floating_point():
            frac = (o != r).float().mean().item() if r.numel() else 0.0
            ok &= frac <= INDEX_MISMATCH_OK
            worst = max(worst, frac)
            continue
        err = (o.float() - r.float()).abs().max().item() / (r.float().abs().max().item() + 1e-6)
        ok &= err <= TOL.get(r.dtype, 1e-3) and bool(torch.isfinite(o).all())
        worst = max(worst, err)
    return ok, f"err {worst:.1e}"


def _count_kernels(codes: list[str]) -> tuple[int, int]:
    src = "\n".join(codes)
    triton = len(set(re.findall(r"async_compile\.triton\('(\w+)'", src)))
    vendor = len(re.findall(r"extern_kernels\.\w+\(|(?:torch\.ops\.)?aten\.\w+\.default\(", src))
    return triton, vendor


def _bench(fn) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=5, rep=50, return_mode="median")


def check(path: Path, small: bool) -> bool:
    from torch._inductor.utils import run_and_get_code

    module = suite_info.load(path)
    if small:
        suite_info.shrink(module)
    model, inputs = suite_info.build(module)
    model = model.cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    torch._dynamo.reset()
    with torch.no_grad():
        ref = model(*inputs)
        compiled = torch.compile(model, fullgraph=True)
        t0 = time.time()
        out, codes = run_and_get_code(compiled, *inputs)
        compile_s = time.time() - t0
        ok, err = _compare(out, ref)
        triton, vendor = _count_kernels(codes)
        eager_ms = _bench(lambda: model(*inputs))
        compiled_ms = _bench(lambda: compiled(*inputs))
    good = ok and triton > 0
    verdict = "OK" if good else ("NO-TRITON" if ok else "MISMATCH")
    print(
        f"{path.parent.name}/{path.stem:46} triton {triton:3d} vendor {vendor:3d}  eager {eager_ms:8.3f} ms  "
        f"compiled {compiled_ms:8.3f} ms  x{eager_ms / compiled_ms:5.2f}  {err:11}  compile {compile_s:5.1f} s  {verdict}",
        flush=True,
    )
    return good


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="problem files")
    parser.add_argument("--small", action="store_true", help="run at each file's SMALL sizes")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("check_suite: no CUDA device; run it on the GPU machine", file=sys.stderr)
        return 2
    failed = []
    for path in args.files:
        try:
            if not check(path, args.small):
                failed.append(path.stem)
        except Exception as e:  # one broken problem is a row, the run goes on
            print(f"{path.parent.name}/{path.stem:46} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
            failed.append(path.stem)
        torch.cuda.empty_cache()
    print(f"{len(args.files) - len(failed)}/{len(args.files)} ok" + (f"; failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
