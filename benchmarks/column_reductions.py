"""Schedules for a reduction over a strided dimension (argmin over dim 0 of a [R, C] fp32 tensor), timed
directly on the GPU: which launch shapes the column-reduction template should offer. The template gives a
program XB columns and walks the R rows in [RB, XB] tiles, a running (min, index) per tile element, reduced
down the rows at the end. With C = 4096 and XB = 16 there are only 256 programs (two per SM), each waiting
for one tile at a time; these variants measure what more programs (narrower column strips) and more loads
in flight per program (unrolled tiles, a pipelined loop) buy:

  tile    the template's form, one [RB, XB] tile per step
  unroll  U tiles loaded back to back per step (independent loads before the first use)
  staged  the tile loop as tl.range(..., num_stages=S)
  helper  the template's own body: Inductor's NaN-aware minimum_with_index, the masked updates and
          min_with_index down the rows (in the bench the template screened slower than `tile`: how much of
          that is the body)
  inductor  Inductor's argmin kernel for 16384x4096 as the template writes it, line for line (constant sizes,
          the unmasked columns, num_stages given at launch): what the search screened

Usage: python3 benchmarks/column_reductions.py [R C | inductor]   (prints ms and TB/s of the input read, best
first; `inductor`: only the helper and Inductor-form variants, at 16384x4096)
"""
import sys

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers
from triton.testing import do_bench


@triton.jit
def _step(acc, acc_i, v, rows, ok):
    take = ok & ((v < acc) | ((v == acc) & (rows < acc_i)) | ((v != v) & (acc == acc)))
    return tl.where(take, v, acc), tl.where(take, rows, acc_i)


@triton.jit
def argmin_cols(x_ptr, out_ptr, R, C, XB: tl.constexpr, RB: tl.constexpr, U: tl.constexpr, S: tl.constexpr):
    cols = tl.program_id(0) * XB + tl.arange(0, XB)[None, :]
    cmask = cols < C
    base = tl.arange(0, RB)[:, None]
    acc = tl.full([RB, XB], float("inf"), tl.float32)
    acc_i = tl.full([RB, XB], 2147483647, tl.int32)
    for r0 in tl.range(0, R, RB * U, num_stages=S):
        for u in tl.static_range(U):
            rows = r0 + u * RB + base
            ok = (rows < R) & cmask
            v = tl.load(x_ptr + rows * C + cols, ok, other=float("inf"), eviction_policy="evict_first")
            acc, acc_i = _step(acc, acc_i, v, rows, ok)
    # Down the rows: the smallest value, the first row holding it.
    m = tl.min(acc, 0)
    cand = tl.where(acc == m[None, :], acc_i, 2147483647)
    idx = tl.min(cand, 0)
    tl.store(out_ptr + tl.program_id(0) * XB + tl.arange(0, XB), idx.to(tl.int64), (tl.program_id(0) * XB +
                                                                                   tl.arange(0, XB)) < C)


@triton.jit
def argmin_cols_helper(x_ptr, out_ptr, R, C, XB: tl.constexpr, RB: tl.constexpr, S: tl.constexpr):
    xindex = tl.program_id(0) * XB + tl.arange(0, XB)[None, :]
    xmask = xindex < C
    rbase = tl.arange(0, RB)[:, None]
    acc = tl.full([RB, XB], float("inf"), tl.float32)
    acc_i = tl.full([RB, XB], 2147483647, tl.int32)
    for r0 in tl.range(0, R, RB, num_stages=S):
        rindex = r0 + rbase
        rmask = rindex < R
        v = tl.load(x_ptr + (xindex + C * rindex), rmask & xmask, eviction_policy="evict_first", other=0.0)
        nxt, nxt_i = triton_helpers.minimum_with_index(acc, acc_i, v, rindex)
        acc = tl.where(rmask & xmask, nxt, acc)
        acc_i = tl.where(rmask & xmask, nxt_i, acc_i)
    _, idx = triton_helpers.min_with_index(acc, acc_i, 0)
    tl.store(out_ptr + xindex, idx[None, :].to(tl.int64), xmask)


@triton.jit
def argmin_inductor_transposed(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 4096
    r0_numel = 16384
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    r0_base = tl.arange(0, R0_BLOCK)[:, None]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([R0_BLOCK, XBLOCK], float("inf"), tl.float32)
    _tmp2_index = tl.full([R0_BLOCK, XBLOCK], 2147483647, tl.int32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 4096*r0_1), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [R0_BLOCK, XBLOCK])
        _tmp2_next, _tmp2_index_next = triton_helpers.minimum_with_index(_tmp2, _tmp2_index, tmp1, rindex)
        _tmp2 = tl.where(r0_mask, _tmp2_next, _tmp2)
        _tmp2_index = tl.where(r0_mask, _tmp2_index_next, _tmp2_index)
    tmp2_val, tmp2_idx = triton_helpers.min_with_index(_tmp2, _tmp2_index, 0)
    tmp2 = tmp2_idx[None, :]
    tl.store(out_ptr0 + (x0), tmp2, None)


@triton.jit
def argmin_inductor_staged(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr,
                           S: tl.constexpr, CONST: tl.constexpr):
    if CONST:
        xnumel = 4096
        r0_numel = 16384
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    r0_base = tl.arange(0, R0_BLOCK)[:, None]
    x0 = xindex
    _tmp2 = tl.full([R0_BLOCK, XBLOCK], float("inf"), tl.float32)
    _tmp2_index = tl.full([R0_BLOCK, XBLOCK], 2147483647, tl.int32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK, num_stages=S):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 4096*r0_1), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [R0_BLOCK, XBLOCK])
        _tmp2_next, _tmp2_index_next = triton_helpers.minimum_with_index(_tmp2, _tmp2_index, tmp1, rindex)
        _tmp2 = tl.where(r0_mask, _tmp2_next, _tmp2)
        _tmp2_index = tl.where(r0_mask, _tmp2_index_next, _tmp2_index)
    tmp2_val, tmp2_idx = triton_helpers.min_with_index(_tmp2, _tmp2_index, 0)
    tmp2 = tmp2_idx[None, :]
    tl.store(out_ptr0 + (x0), tmp2, None)


def main():
    R, C = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (16384, 4096)
    x = torch.randn(R, C, device="cuda")
    ref = torch.argmin(x, 0)
    nbytes = x.numel() * 4 + C * 8
    src = torch.randn(R * C // 2, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")
    print(f"copy {src.numel() * 8 / copy_ms / 1e9:.2f} TB/s (read+write {src.numel() * 8 / 1e6:.0f} MB)")
    eager = do_bench(lambda: torch.argmin(x, 0), warmup=50, rep=300, return_mode="median")
    rows = [("torch.argmin", eager)]
    out = torch.empty(C, dtype=torch.int64, device="cuda")
    for xb in () if sys.argv[1:] == ["inductor"] else (4, 8, 16, 32, 64):
        for rb in (32, 64, 128, 256, 512):
            if xb * rb < 512 or xb * rb > 8192:
                continue
            for u, s in ((1, 1), (2, 1), (4, 1), (1, 2), (1, 3)):
                if xb * rb * u > 16384:
                    continue
                for w in (2, 4, 8):
                    per = xb * rb // (32 * w)
                    if per < 2 or per > 32:
                        continue
                    grid = (triton.cdiv(C, xb),)
                    fn = lambda: argmin_cols[grid](x, out, R, C, XB=xb, RB=rb, U=u, S=s, num_warps=w)
                    try:
                        fn()
                    except Exception as e:  # a shape the compiler refuses is data, not a failure
                        print(f"skip XB={xb} RB={rb} U={u} S={s} w={w}: {type(e).__name__}")
                        continue
                    torch.cuda.synchronize()
                    if not torch.equal(out, ref):
                        print(f"WRONG XB={xb} RB={rb} U={u} S={s} w={w}")
                        continue
                    ms = do_bench(fn, warmup=25, rep=150, return_mode="median")
                    rows.append((f"XB={xb} RB={rb} U={u} S={s} w={w} ({grid[0]} programs)", ms))
    for xb, rb, w in ((32, 256, 8), (16, 256, 8), (16, 256, 4), (16, 512, 8), (32, 128, 8), (8, 256, 8)):
        for st in (2, 3):
            grid = (triton.cdiv(C, xb),)
            fn = lambda: argmin_cols_helper[grid](x, out, R, C, XB=xb, RB=rb, S=st, num_warps=w)
            fn()
            torch.cuda.synchronize()
            if not torch.equal(out, ref):
                print(f"WRONG helper XB={xb} RB={rb} S={st} w={w}")
                continue
            ms = do_bench(fn, warmup=25, rep=150, return_mode="median")
            rows.append((f"helper XB={xb} RB={rb} S={st} w={w} ({grid[0]} programs)", ms))
    for xb, rb, w in ((32, 256, 8), (16, 128, 8), (16, 256, 8), (32, 128, 8)):
        if (R, C) != (16384, 4096):
            break
        for st in (1, 2, 3):
            grid = (C // xb,)
            fn = lambda: argmin_inductor_transposed[grid](x, out, C, R, XBLOCK=xb, R0_BLOCK=rb, num_warps=w,
                                                          num_stages=st)
            k = fn()
            torch.cuda.synchronize()
            if not torch.equal(out, ref):
                print(f"WRONG inductor XB={xb} RB={rb} S={st} w={w}")
                continue
            ms = do_bench(fn, warmup=25, rep=150, return_mode="median")
            rows.append((f"inductor XB={xb} RB={rb} S={st} w={w} regs={k.n_regs} spills={k.n_spills}", ms))
        for const in (False, True):
            if (R, C) != (16384, 4096):
                break
            for st in (2, 3):
                grid = (C // xb,)
                fn = lambda: argmin_inductor_staged[grid](x, out, C, R, XBLOCK=xb, R0_BLOCK=rb, S=st, CONST=const,
                                                          num_warps=w)
                k = fn()
                torch.cuda.synchronize()
                if not torch.equal(out, ref):
                    print(f"WRONG inductor-staged XB={xb} RB={rb} S={st} w={w}")
                    continue
                ms = do_bench(fn, warmup=25, rep=150, return_mode="median")
                rows.append((f"inductor-staged const={int(const)} XB={xb} RB={rb} S={st} w={w} regs={k.n_regs}", ms))
    rows.sort(key=lambda r: r[1])
    floor = nbytes / (src.numel() * 8 / copy_ms)
    print(f"argmin over dim 0 of {R}x{C} fp32: floor {floor:.4f} ms at the copy rate")
    for name, ms in rows[:25] + [r for r in rows[25:] if r[0] == "torch.argmin" or r[0].startswith(("helper", "inductor"))]:
        print(f"{ms:8.4f} ms {nbytes / ms / 1e9:6.2f} TB/s  {ms / floor:5.2f}x floor  {name}")


if __name__ == "__main__":
    main()
