"""Probe (session 39): row 46's generated split apply kernel (softmax over 1873 rows of 1.2M bf16, read along and
written across) against the hand-written one of session 38 (5.7 ms against 8.1). Three differences are varied
one at a time on the generated form: the programs' order (segments fastest, as generated, or row tiles fastest,
as the hand form), the load's evict_first hint, and exp against exp2 with the row max scaled once (the row's sum
as one reciprocal in every form). Statistics: the generated online combine (two exps an element) against a block
max (one exp an element), each in both program orders. On a machine without a GPU the kernels run in Triton's
interpreter at a small shape (PROBE_SHAPE=L,R PROBE_SEGS=S, PYTHONPATH=python) and only their errors mean anything.

    python apply_probe.py
"""
import torch
import triton
import triton.language as tl
from torch._inductor.runtime.triton_helpers import libdevice

import os
# libdevice's exp as Inductor writes it; on the CPU (a check of the results in Triton's interpreter) the worker's
# libdevice shim stands in for it
if not torch.cuda.is_available():
    from kernelopt.worker.runtime.libdevice_cpu import libdevice
_exp = libdevice.exp
L, R = (int(v) for v in os.environ.get("PROBE_SHAPE", "1212344,1873").split(","))


@triton.jit
def stats_online(x_ptr, part, L: tl.constexpr, R: tl.constexpr, NSEG: tl.constexpr, SEG: tl.constexpr, RB: tl.constexpr, BLOCKMAX: tl.constexpr,
                 TILE_FAST: tl.constexpr, NT: tl.constexpr):
    if TILE_FAST:
        row = tl.program_id(0) % NT
        seg = tl.program_id(0) // NT
    else:
        seg = tl.program_id(0) % NSEG
        row = tl.program_id(0) // NSEG
    base = x_ptr + row.to(tl.int64) * L
    r = tl.arange(0, RB)[None, :]
    if BLOCKMAX:
        m = tl.max(tl.full([1, RB], float("-inf"), tl.float32), 1)[:, None]
        s = tl.zeros([1, RB], tl.float32)
        for off in tl.range(seg * SEG, tl.minimum(seg * SEG + SEG, L), RB):
            idx = off + r
            v = tl.load(base + idx, idx < L, other=float("-inf")).to(tl.float32)
            mn = tl.maximum(m, tl.max(v, 1)[:, None])
            s = s * tl.math.exp2((m - mn) * 1.4426950408889634) + tl.math.exp2((v - mn) * 1.4426950408889634)
            m = mn
        M = tl.max(m, 1)
        S = tl.sum(s, 1)
    else:
        m = tl.full([1, RB], float("-inf"), tl.float32)
        s = tl.zeros([1, RB], tl.float32)
        for off in tl.range(seg * SEG, tl.minimum(seg * SEG + SEG, L), RB):
            idx = off + r
            v = tl.load(base + idx, idx < L, eviction_policy="evict_last", other=0.0).to(tl.float32)
            # Inductor's online_softmax_combine, written out (two exps an element)
            mn = tl.maximum(m, v)
            sn = s * tl.where(mn == float("-inf"), 1.0, _exp(m - mn)) + \
                tl.where(mn == float("-inf"), 1.0, _exp(v - mn))
            m = tl.where(idx < L, mn, m)
            s = tl.where(idx < L, sn, s)
        M = tl.max(m, 1)
        S = tl.sum(tl.where(m == float("-inf"), 0.0, s * _exp(m - M[:, None])), 1)
    tl.store(part + row * NSEG + seg + tl.zeros([1], tl.int32), M)
    tl.store(part + R * NSEG + row * NSEG + seg + tl.zeros([1], tl.int32), S)


@triton.jit
def apply_gen(x_ptr, out_ptr, part, L: tl.constexpr, R: tl.constexpr, NSEG: tl.constexpr, SEG: tl.constexpr, SB: tl.constexpr, XB: tl.constexpr,
              RB: tl.constexpr, NT: tl.constexpr, TILE_FAST: tl.constexpr, EVICT: tl.constexpr, EXP2: tl.constexpr):
    if TILE_FAST:
        tile = tl.program_id(0) % NT
        sseg = tl.program_id(0) // NT
    else:
        sseg = tl.program_id(0) % NSEG
        tile = tl.program_id(0) // NSEG
    xoffset = tile.to(tl.int64) * XB
    sidx = tl.arange(0, SB)[None, :]
    xindex = xoffset + tl.arange(0, XB)[:, None].to(tl.int64)
    kopt_xl = tl.arange(0, XB)[:, None]
    xmask = xindex < R
    kopt_rl = tl.arange(0, RB)[None, :]
    pm = tl.load(part + (xindex * NSEG + sidx), xmask & (sidx < NSEG), other=float("-inf"))
    ps = tl.load(part + (R * NSEG + xindex * NSEG + sidx), xmask & (sidx < NSEG), other=0.0)
    tmp3 = tl.max(pm, 1)
    tmp4 = tl.sum(tl.where(pm == float("-inf"), 0.0, ps * _exp(pm - tmp3[:, None])), 1)
    tmp3 = tmp3[:, None]
    rcp = 1.0 / tmp4[:, None]
    ml = tmp3 * 1.4426950408889634
    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, L), RB):
        r0_index = r0_offset + kopt_rl
        r0_mask = r0_index < L
        src = x_ptr + (L * xoffset + tl.cast(r0_offset, tl.int64)) + (L * kopt_xl + kopt_rl)
        if EVICT:
            v = tl.load(src, r0_mask & xmask, eviction_policy="evict_first", other=0.0).to(tl.float32)
        else:
            v = tl.load(src, r0_mask & xmask, other=0.0).to(tl.float32)
        if EXP2:
            e = tl.math.exp2(v * 1.4426950408889634 - ml)
        else:
            e = _exp(v - tmp3)
        tl.store(out_ptr + (xoffset + R * tl.cast(r0_offset, tl.int64)) + (kopt_xl + R * kopt_rl), e * rcp,
                 r0_mask & xmask)


def timed(fn, reps=7):
    if not torch.cuda.is_available():  # the interpreter checks the kernels' results only
        fn(); return float('nan')
    fn(); torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[reps // 2]


def main():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    print(torch.cuda.get_device_name() if dev == "cuda" else "cpu", flush=True)
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.empty((R, L), device=dev, dtype=torch.bfloat16).normal_(generator=g).t()  # (L, R), stride (1, L)
    ref = torch.softmax(x[:, :64].float(), dim=0)
    out = torch.empty((L, R), device=dev, dtype=torch.bfloat16)
    for seg in tuple(int(v) for v in os.environ.get("PROBE_SEGS", "33792,65536").split(",")):
        nseg = triton.cdiv(L, seg)
        part = torch.empty((2 * R * nseg,), device=dev, dtype=torch.float32)
        sb = triton.next_power_of_2(nseg)
        for bm, rb, w in ((0, 1024, 4), (0, 2048, 8), (1, 1024, 4), (1, 2048, 8)):
            for tf in (0, 1):
                fn = lambda: stats_online[(R * nseg,)](x, part, L, R, NSEG=nseg, SEG=seg, RB=rb, BLOCKMAX=bool(bm),
                                                       TILE_FAST=bool(tf), NT=R, num_warps=w, num_stages=1)
                t = timed(fn)
                print(f"  nseg {nseg} stats blockmax={bm} RB{rb} w{w} tile_fast={tf}: {t:.3f} ms "
                      f"({L * R * 2 / t / 1e9:.2f} TB/s)", flush=True)
        stats_online[(R * nseg,)](x, part, L, R, NSEG=nseg, SEG=seg, RB=1024, BLOCKMAX=False, TILE_FAST=False, NT=R, num_warps=4)
        for xb, rb, w in ((128, 64, 8), (64, 64, 8), (32, 64, 8)):
            nt = triton.cdiv(R, xb)
            for tf, ev, e2 in ((0, 1, 0), (0, 0, 0), (0, 1, 1), (0, 0, 1), (1, 1, 0), (1, 0, 0), (1, 1, 1), (1, 0, 1)):
                fn = lambda: apply_gen[(nt * nseg,)](x, out, part, L, R, NSEG=nseg, SEG=seg, SB=sb, XB=xb, RB=rb, NT=nt,
                                                     TILE_FAST=bool(tf), EVICT=bool(ev), EXP2=bool(e2), num_warps=w,
                                                     num_stages=1)
                t = timed(fn)
                err = (out[:, :64].float() - ref).abs().max().item()
                print(f"  nseg {nseg} apply XB{xb} RB{rb} w{w} tile_fast={tf} evict={ev} exp2={e2}: {t:.3f} ms "
                      f"({2 * L * R * 2 / t / 1e9:.2f} TB/s) err {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
