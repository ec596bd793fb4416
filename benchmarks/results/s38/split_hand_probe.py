"""Probe (session 38, H100): row 46's two-launch split written by hand, to find what its launches lose against
the bytes' time (statistics 2.7 ms for 4.5 GB read; apply 8.2-13 ms for 9 GB, where a copy of the same layout
takes 3.0 ms). Hypotheses: 64-bit index arithmetic on every element (Inductor's int64 `r0_index` products),
libdevice exp (two per element in the online statistics), and the layout conversion of float32 values before a
bfloat16 store. Each kernel below changes one of those.

    python split_hand_probe.py
"""
import torch
import triton
import triton.language as tl

L, R = 1212344, 1873  # softmax over dim 0 of (L, R): R rows of L, each contiguous in memory; output written across
LOG2E = 1.4426950408889634


@triton.jit
def stats_i64(x_ptr, pm_ptr, ps_ptr, L, NSEG: tl.constexpr, SEG: tl.constexpr, RB: tl.constexpr, EXP2: tl.constexpr):
    seg = tl.program_id(0)
    row = tl.program_id(1)
    r = tl.arange(0, RB).to(tl.int64)
    m = tl.full([RB], float("-inf"), tl.float32)
    s = tl.zeros([RB], tl.float32)
    for off in range(seg * SEG, tl.minimum(seg * SEG + SEG, L), RB):
        idx = off + r
        v = tl.load(x_ptr + (idx + row.to(tl.int64) * L), idx < L, other=float("-inf")).to(tl.float32)
        mn = tl.maximum(m, v)
        if EXP2:
            s = s * tl.math.exp2((m - mn) * 1.4426950408889634) + tl.math.exp2((v - mn) * 1.4426950408889634)
        else:
            s = s * tl.exp(m - mn) + tl.exp(v - mn)
        s = tl.where(mn == float("-inf"), 0.0, s)
        m = mn
    M = tl.max(m, 0)
    S = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - M)), 0)
    tl.store(pm_ptr + row * NSEG + seg, M)
    tl.store(ps_ptr + row * NSEG + seg, S)


@triton.jit
def stats_blockmax(x_ptr, pm_ptr, ps_ptr, L, NSEG: tl.constexpr, SEG: tl.constexpr, RB: tl.constexpr):
    # One exp an element: the step's maximum over the block first, the running sum rescaled once a step.
    seg = tl.program_id(0)
    row = tl.program_id(1)
    base = x_ptr + row.to(tl.int64) * L
    r = tl.arange(0, RB)
    m = tl.max(tl.full([RB], float("-inf"), tl.float32), 0)
    s = tl.zeros([RB], tl.float32)
    for off in range(seg * SEG, tl.minimum(seg * SEG + SEG, L), RB):
        idx = off + r
        v = tl.load(base + idx, idx < L, other=float("-inf")).to(tl.float32)
        mn = tl.maximum(m, tl.max(v, 0))
        s = s * tl.math.exp2((m - mn) * 1.4426950408889634) + tl.math.exp2((v - mn) * 1.4426950408889634)
        m = mn
    tl.store(pm_ptr + row * NSEG + seg, m)
    tl.store(ps_ptr + row * NSEG + seg, tl.sum(s, 0))


@triton.jit
def apply_k(x_ptr, out_ptr, pm_ptr, ps_ptr, L, R, NSEG: tl.constexpr, SB: tl.constexpr, SEG: tl.constexpr,
            XB: tl.constexpr, RB: tl.constexpr, I32: tl.constexpr, EXP2: tl.constexpr, CAST: tl.constexpr):
    seg = tl.program_id(1)
    rows = tl.program_id(0) * XB + tl.arange(0, XB)[:, None]
    rmask = rows < R
    k = tl.arange(0, SB)[None, :]
    pm = tl.load(pm_ptr + rows * NSEG + k, rmask & (k < NSEG), other=float("-inf"))
    ps = tl.load(ps_ptr + rows * NSEG + k, rmask & (k < NSEG), other=0.0)
    M = tl.max(pm, 1)[:, None]
    S = tl.sum(tl.where(pm == float("-inf"), 0.0, ps * tl.exp(pm - M)), 1)[:, None]
    inv = 1.0 / S
    Ml = M * 1.4426950408889634
    c = tl.arange(0, RB)[None, :]
    for off in range(seg * SEG, tl.minimum(seg * SEG + SEG, L), RB):
        idx = off + c
        mask = rmask & (idx < L)
        if I32:
            # a scalar 64-bit base a step, 32-bit offsets inside the tile
            src = x_ptr + (tl.program_id(0) * XB).to(tl.int64) * L + off + (tl.arange(0, XB)[:, None] * L + c)
            dst = out_ptr + tl.cast(off, tl.int64) * R + (c * R + rows)
        else:
            src = x_ptr + (rows.to(tl.int64) * L + idx.to(tl.int64))
            dst = out_ptr + (idx.to(tl.int64) * R + rows.to(tl.int64))
        v = tl.load(src, mask, other=0.0).to(tl.float32)
        if EXP2:
            y = tl.math.exp2(v * 1.4426950408889634 - Ml) * inv
        else:
            y = tl.exp(v - M) / S
        if CAST:
            y = y.to(out_ptr.dtype.element_ty)
        tl.store(dst, y, mask)


def timed(fn, reps=7):
    fn(); torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[reps // 2]


def main():
    print(torch.cuda.get_device_name(), flush=True)
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.empty((R, L), device="cuda", dtype=torch.bfloat16).normal_(generator=g).t()  # (L, R), stride (1, L)
    ref = torch.softmax(x[:, :64].float(), dim=0)  # 64 rows checked
    out = torch.empty((L, R), device="cuda", dtype=torch.bfloat16)
    for nseg in (19, 35):
        seg = triton.cdiv(triton.cdiv(L, nseg), 2048) * 2048
        nseg = triton.cdiv(L, seg)
        pm = torch.empty((R, nseg), device="cuda", dtype=torch.float32)
        ps = torch.empty_like(pm)
        sb = triton.next_power_of_2(nseg)
        stats = {
            "i64 libdevice RB2048 w8": lambda: stats_i64[(nseg, R)](x, pm, ps, L, NSEG=nseg, SEG=seg, RB=2048, EXP2=False, num_warps=8),
            "i64 exp2 RB2048 w8": lambda: stats_i64[(nseg, R)](x, pm, ps, L, NSEG=nseg, SEG=seg, RB=2048, EXP2=True, num_warps=8),
            "blockmax RB2048 w8": lambda: stats_blockmax[(nseg, R)](x, pm, ps, L, NSEG=nseg, SEG=seg, RB=2048, num_warps=8),
            "blockmax RB4096 w8": lambda: stats_blockmax[(nseg, R)](x, pm, ps, L, NSEG=nseg, SEG=seg, RB=4096, num_warps=8),
            "blockmax RB1024 w4": lambda: stats_blockmax[(nseg, R)](x, pm, ps, L, NSEG=nseg, SEG=seg, RB=1024, num_warps=4),
        }
        for name, fn in stats.items():
            t = timed(fn)
            print(f"  nseg {nseg} stats {name}: {t:.3f} ms ({L * R * 2 / t / 1e9:.2f} TB/s)", flush=True)
        stats["i64 libdevice RB2048 w8"]()
        for xb, rb, w in ((128, 64, 8), (64, 64, 4), (64, 128, 8), (128, 128, 16), (256, 32, 8), (128, 32, 4)):
            for i32, e2, cast in ((0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1), (0, 1, 1)):
                fn = lambda: apply_k[(triton.cdiv(R, xb), nseg)](x, out, pm, ps, L, R, NSEG=nseg, SB=sb, SEG=seg, XB=xb, RB=rb,
                                                                 I32=bool(i32), EXP2=bool(e2), CAST=bool(cast), num_warps=w)
                try:
                    t = timed(fn)
                    err = (out[:, :64].float() - ref).abs().max().item()
                    print(f"  nseg {nseg} apply XB{xb} RB{rb} w{w} i32={i32} exp2={e2} cast={cast}: {t:.3f} ms "
                          f"({2 * L * R * 2 / t / 1e9:.2f} TB/s) err {err:.1e}", flush=True)
                except Exception as e:  # noqa: BLE001 - a probe
                    print(f"  apply XB{xb} RB{rb}: failed {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
