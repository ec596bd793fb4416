"""Prototype: an Inductor-form pointwise kernel over an odd xnumel (every access masked: scalar) against the same
body with the mask only on the last block (full blocks unmasked: vector accesses). RMS-norm apply of 129 x 7115197."""
import torch, triton, triton.language as tl
from triton.testing import do_bench


@triton.jit
def masked(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 917860413
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x1 = xindex // 7115197
    x0 = (xindex % 7115197)
    tmp0 = tl.load(in_ptr0 + (x2), xmask)
    tmp1 = tl.load(in_ptr1 + (x1), xmask, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr2 + (x0), xmask, eviction_policy='evict_last')
    tmp6 = libdevice_rsqrt(tmp1 / 7115197.0 + 1e-05)
    tl.store(out_ptr0 + (x2), tmp0 * tmp6 * tmp8, xmask)


@triton.jit
def libdevice_rsqrt(x):
    return 1.0 / tl.sqrt(x)


@triton.jit
def tail(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 917860413
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    if xoffset + XBLOCK <= xnumel:
        x2 = xindex
        x1 = xindex // 7115197
        x0 = (xindex % 7115197)
        tmp0 = tl.load(in_ptr0 + (x2))
        tmp1 = tl.load(in_ptr1 + (x1), eviction_policy='evict_last')
        tmp8 = tl.load(in_ptr2 + (x0), eviction_policy='evict_last')
        tmp6 = libdevice_rsqrt(tmp1 / 7115197.0 + 1e-05)
        tl.store(out_ptr0 + (x2), tmp0 * tmp6 * tmp8)
    else:
        xmask = xindex < xnumel
        x2 = xindex
        x1 = xindex // 7115197
        x0 = (xindex % 7115197)
        tmp0 = tl.load(in_ptr0 + (x2), xmask)
        tmp1 = tl.load(in_ptr1 + (x1), xmask, eviction_policy='evict_last')
        tmp8 = tl.load(in_ptr2 + (x0), xmask, eviction_policy='evict_last')
        tmp6 = libdevice_rsqrt(tmp1 / 7115197.0 + 1e-05)
        tl.store(out_ptr0 + (x2), tmp0 * tmp6 * tmp8, xmask)


x = torch.randn(129, 7115197, device="cuda")
ss = (x * x).sum(1)
w = torch.randn(7115197, device="cuda")
n = x.numel()
for XB, warps in [(1024, 4), (2048, 8), (4096, 8)]:
    o1 = torch.empty_like(x); o2 = torch.empty_like(x)
    g = (triton.cdiv(n, XB),)
    f1 = lambda: masked[g](x, ss, w, o1, n, XBLOCK=XB, num_warps=warps)
    f2 = lambda: tail[g](x, ss, w, o2, n, XBLOCK=XB, num_warps=warps)
    f1(); f2(); torch.cuda.synchronize()
    t1 = do_bench(f1, warmup=5, rep=40); t2 = do_bench(f2, warmup=5, rep=40)
    floor = (2 * n * 4) / 1e9 / 3.35
    print(f"XBLOCK={XB} warps={warps}: masked {t1:.3f} ms, tail-split {t2:.3f} ms ({t1 / t2:.2f}x), equal={torch.equal(o1, o2)}", flush=True)
