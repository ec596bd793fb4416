"""Where a fused attention-softmax row kernel's time goes, timed directly on the GPU: the ALiBi causal
softmax Inductor fuses between the two batched GEMMs (scores bf16 [B*H*S, S], the bias built from an int64
position buffer and per-head slopes, future keys masked, fp32 softmax, cast back in place), in the
single-pass form the search accepted (one warp per 2048-wide row, each row read once), which measured
1.73x its memory floor on the H200. Each variant changes one thing:

  captured   the accepted form: libdevice.exp, the int64 positions loaded per row, IEEE division
  fast_exp   tl.exp (ex2.approx) instead of libdevice.exp
  recip      the row's sum inverted once, every element multiplied
  no_pos     distance from the indices (what loading the positions costs; not a rewrite: the
             buffer's values are data)
  skip_masked  the score load predicated off where the causal mask replaces it with -inf anyway (a
             masked-off sector is never fetched: half the reads of a causal row)
  all        fast_exp + recip + skip_masked

Usage: python3 benchmarks/fused_softmax_rows.py   (ms per variant and warps, and the ratio to a copy of
the same bytes; each variant's output is checked against the captured form's)
"""
import sys

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.testing import do_bench


@triton.jit
def alibi_softmax(s_ptr, pos_ptr, slope_ptr, S: tl.constexpr, H: tl.constexpr, XB: tl.constexpr,
                  FAST_EXP: tl.constexpr, RECIP: tl.constexpr, POS: tl.constexpr, SKIP: tl.constexpr):
    xi = tl.program_id(0) * XB + tl.arange(0, XB)[:, None]
    r = tl.arange(0, S)[None, :]
    q = xi % S
    slope = tl.load(slope_ptr + (xi // S) % H)
    if POS == 0:
        kp = tl.load(pos_ptr + r)
        qp = tl.load(pos_ptr + q)
        dist = (kp - qp).to(tl.float32)
    else:
        dist = (r - q).to(tl.float32)
    future = dist > 0.0
    ptr = s_ptr + xi.to(tl.int64) * S + r
    if SKIP:
        x = tl.load(ptr, ~future, other=0.0, eviction_policy="evict_first").to(tl.float32)
    else:
        x = tl.load(ptr, eviction_policy="evict_first").to(tl.float32)
    v = tl.where(future, float("-inf"), x * 0.125 + slope * dist)
    m = tl.max(v, 1)[:, None]
    if FAST_EXP:
        e = tl.exp(v - m)
    else:
        e = libdevice.exp(v - m)
    s = tl.sum(e, 1)[:, None]
    if RECIP:
        y = e * (1.0 / s)
    else:
        y = e / s
    tl.store(ptr, y.to(tl.bfloat16))


VARIANTS = {
    "captured": dict(FAST_EXP=False, RECIP=False, POS=0, SKIP=False),
    "fast_exp": dict(FAST_EXP=True, RECIP=False, POS=0, SKIP=False),
    "recip": dict(FAST_EXP=False, RECIP=True, POS=0, SKIP=False),
    "no_pos": dict(FAST_EXP=False, RECIP=False, POS=1, SKIP=False),
    "skip_masked": dict(FAST_EXP=False, RECIP=False, POS=0, SKIP=True),
    "all": dict(FAST_EXP=True, RECIP=True, POS=0, SKIP=True),
}


def main():
    torch.manual_seed(0)
    B, H, S = 8, 16, 2048
    rows = B * H * S
    src = (torch.randn(rows, S, device="cuda") * 4).to(torch.bfloat16)
    pos = torch.arange(S, device="cuda")
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], device="cuda")
    work = src.clone()
    copy_ms = do_bench(lambda: work.copy_(src), warmup=20, rep=200, return_mode="median")
    print(f"scores {rows}x{S} bf16: copy {copy_ms:.4f} ms", flush=True)
    ref = None
    out = []
    for name, kw in VARIANTS.items():
        for xb, warps in ((1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (4, 4)):
            def run():
                alibi_softmax[(rows // xb,)](work, pos, slopes, S=S, H=H, XB=xb, num_warps=warps, **kw)
            work.copy_(src)
            run()
            torch.cuda.synchronize()
            got = work.float()
            if ref is None:
                ref = got
            err = (got - ref).abs().max().item()
            # Timed on a fresh copy each time would time the copy too: the kernel is in place, so it runs
            # on its own output after the first call (same shapes, same masked pattern, same bytes).
            ms = do_bench(run, warmup=20, rep=200, return_mode="median")
            out.append((ms, name, xb, warps, err))
            print(f"  {name:12s} XB={xb} warps={warps}: {ms:.4f} ms ({ms / copy_ms:.2f}x copy), max |diff| vs captured {err:.2e}",
                  flush=True)
    out.sort()
    print("best: " + ", ".join(f"{n} XB={x} w={w} {ms:.4f}" for ms, n, x, w, _ in out[:5]))


if __name__ == "__main__":
    sys.exit(main())
