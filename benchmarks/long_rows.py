"""Schedules for (log-)softmax over long rows (32K columns), timed directly on the GPU: which one a
template should offer. The row-softmax template's one-pass schedule keeps a whole row in registers
as float32 (32 values per thread at 32 warps), so one program fits an SM and a program's load never
overlaps another's reductions; a 32K bf16 row measured 1.35x its floor that way (H200). Variants:

  f32     the template's one-pass form (row converted to float32 once, kept live across both reductions)
  narrow  the row kept in its own dtype (max is exact there); float32 only inside exp and the output,
          so half the registers stay live and two programs can share an SM
  halves  the row loaded as two half-rows (two [RB/2] tiles): the same bytes, smaller tensors
  two_pass  the row in chunks of CB, twice: a running max and sum over the chunks, then each chunk
          loaded again and written; small programs (several per SM), the second read served by L2
          while few enough rows are in flight (rows in flight x row bytes < L2)
  turns   two_pass with XB rows per program, one after another: the grid (rows / XB) bounds the rows in
          flight, whatever the occupancy, so a very long row's second read still finds it in L2

  reverse two_pass with the second pass over the chunks last to first: the chunks read last in the first
          pass are read first again, so part of a row still finds L2 when the rows in flight outgrow it
          (a 50K bf16 row at four programs per SM: 528 rows x 100 KB in flight, more than the 50 MB L2)

  prefetch two_pass with the next chunk's load issued before the current chunk is reduced (first
          pass) or written (second), so one program overlaps its own loads with its arithmetic

Usage: python3 benchmarks/long_rows.py [turns|reverse|prefetch]  (prints ms, GB/s and registers/spills per variant and shape;
`turns`: only the bounded-grid two-pass variants, on LLM-vocabulary rows)
"""
import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def f32_rows(x_ptr, y_ptr, n, RB: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, RB)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
    m = tl.max(x, 0)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.sum(e, 0)
    y = (x - m) - tl.log(s) if LOG else e / s
    tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), mask)


@triton.jit
def narrow_rows(x_ptr, y_ptr, n, RB: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, RB)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask, other=float("-inf"), eviction_policy="evict_first")
    m = tl.max(x, 0).to(tl.float32)
    s = tl.sum(tl.where(mask, tl.exp(x.to(tl.float32) - m), 0.0), 0)
    if LOG:
        y = (x.to(tl.float32) - m) - tl.log(s)
    else:
        y = tl.exp(x.to(tl.float32) - m) / s
    tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), mask)


@triton.jit
def halves_rows(x_ptr, y_ptr, n, RB: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    H: tl.constexpr = RB // 2
    c0 = tl.arange(0, H)
    c1 = c0 + H
    k0, k1 = c0 < n, c1 < n
    x0 = tl.load(x_ptr + row * n + c0, k0, other=float("-inf"), eviction_policy="evict_first")
    x1 = tl.load(x_ptr + row * n + c1, k1, other=float("-inf"), eviction_policy="evict_first")
    m = tl.maximum(tl.max(x0, 0), tl.max(x1, 0)).to(tl.float32)
    s = tl.sum(tl.where(k0, tl.exp(x0.to(tl.float32) - m), 0.0), 0) + \
        tl.sum(tl.where(k1, tl.exp(x1.to(tl.float32) - m), 0.0), 0)
    if LOG:
        y0 = (x0.to(tl.float32) - m) - tl.log(s)
        y1 = (x1.to(tl.float32) - m) - tl.log(s)
    else:
        y0 = tl.exp(x0.to(tl.float32) - m) / s
        y1 = tl.exp(x1.to(tl.float32) - m) / s
    tl.store(y_ptr + row * n + c0, y0.to(y_ptr.dtype.element_ty), k0)
    tl.store(y_ptr + row * n + c1, y1.to(y_ptr.dtype.element_ty), k1)


@triton.jit
def two_pass_rows(x_ptr, y_ptr, n, CB: tl.constexpr, LOG: tl.constexpr, KEEP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * n
    m = float("-inf")
    s = 0.0
    for c0 in tl.range(0, n, CB):
        cols = c0 + tl.arange(0, CB)
        x = tl.load(base + cols, cols < n, other=float("-inf"),
                    eviction_policy="evict_last" if KEEP else "").to(tl.float32)
        mn = tl.maximum(m, tl.max(x, 0))
        s = s * tl.exp(m - mn) + tl.sum(tl.exp(x - mn), 0)
        m = mn
    ls = tl.log(s)
    for c0 in tl.range(0, n, CB):
        cols = c0 + tl.arange(0, CB)
        k = cols < n
        x = tl.load(base + cols, k, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
        y = (x - m) - ls if LOG else tl.exp(x - m) / s
        tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), k)


@triton.jit
def turns_rows(x_ptr, y_ptr, n_rows, n, CB: tl.constexpr, XB: tl.constexpr, LOG: tl.constexpr):
    for i in range(0, XB):
        row = (tl.program_id(0) * XB + i).to(tl.int64)
        base = x_ptr + row * n
        live = row < n_rows
        m = float("-inf")
        s = 0.0
        for c0 in tl.range(0, n, CB):
            cols = c0 + tl.arange(0, CB)
            x = tl.load(base + cols, (cols < n) & live, other=float("-inf"), eviction_policy="evict_last").to(tl.float32)
            mn = tl.maximum(m, tl.max(x, 0))
            sm = tl.where(mn == float("-inf"), 0.0, mn)
            s = s * tl.exp(m - sm) + tl.sum(tl.exp(x - sm), 0)
            m = mn
        ls = tl.log(s)
        for c0 in tl.range(0, n, CB):
            cols = c0 + tl.arange(0, CB)
            k = (cols < n) & live
            x = tl.load(base + cols, k, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
            y = (x - m) - ls if LOG else tl.exp(x - m) / s
            tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), k)


@triton.jit
def reverse_rows(x_ptr, y_ptr, n, CB: tl.constexpr, LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * n
    m = float("-inf")
    s = 0.0
    for c0 in tl.range(0, n, CB):
        cols = c0 + tl.arange(0, CB)
        x = tl.load(base + cols, cols < n, other=float("-inf"), eviction_policy="evict_last").to(tl.float32)
        mn = tl.maximum(m, tl.max(x, 0))
        sm = tl.where(mn == float("-inf"), 0.0, mn)
        s = s * tl.exp(m - sm) + tl.sum(tl.exp(x - sm), 0)
        m = mn
    last = (n - 1) // CB * CB
    for i in tl.range(0, n, CB):
        cols = (last - i) + tl.arange(0, CB)
        k = cols < n
        x = tl.load(base + cols, k, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
        y = (x - m) - tl.log(s) if LOG else tl.exp(x - m) / s
        tl.store(y_ptr + row * n + cols, y.to(y_ptr.dtype.element_ty), k)


def _copy_rate():
    """GB/s of a 512 MiB device copy (read and write), the floors' bandwidth; seeds the generator."""
    torch.manual_seed(0)
    src = torch.randn(1 << 27, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")
    rate = src.numel() * 8 / copy_ms / 1e6
    print(f"copy {rate:.0f} GB/s")
    return rate


@triton.jit
def prefetch_rows(x_ptr, y_ptr, n, CB: tl.constexpr, LOG: tl.constexpr, REV: tl.constexpr, SEP: tl.constexpr = "",
                  SCM: tl.constexpr = ""):
    """two_pass (REV: its second pass last chunk first) with each pass's next chunk loaded before the
    current one is reduced or written: one program keeps a load in flight through its own arithmetic.
    SEP / SCM: the store's eviction policy and cache modifier (store_hints.py)."""
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * n
    m = float("-inf")
    s = 0.0
    r = tl.arange(0, CB)
    nxt = tl.load(base + r, r < n, other=float("-inf"), eviction_policy="evict_last")
    for c0 in tl.range(0, n, CB):
        x = nxt.to(tl.float32)
        cn = c0 + CB + r
        nxt = tl.load(base + cn, cn < n, other=float("-inf"), eviction_policy="evict_last")
        mn = tl.maximum(m, tl.max(x, 0))
        sm = tl.where(mn == float("-inf"), 0.0, mn)
        s = s * tl.exp(m - sm) + tl.sum(tl.exp(x - sm), 0)
        m = mn
    ls = tl.log(s)
    last = (n - 1) // CB * CB
    first = last if REV else 0
    nxt = tl.load(base + first + r, first + r < n, other=float("-inf"), eviction_policy="evict_first")
    for i in tl.range(0, n, CB):
        c = (last - i) if REV else i
        x = nxt.to(tl.float32)
        cn = (c - CB if REV else c + CB) + r
        nxt = tl.load(base + cn, (cn >= 0) & (cn < n), other=float("-inf"), eviction_policy="evict_first")
        y = (x - m) - ls if LOG else tl.exp(x - m) / s
        tl.store(y_ptr + row * n + c + r, y.to(y_ptr.dtype.element_ty), c + r < n, eviction_policy=SEP,
                 cache_modifier=SCM)


def prefetch_only():
    """The two passes with and without the next chunk's load issued ahead, on the suite's long rows."""
    rate = _copy_rate()
    for rows, cols, dtype, log in [(8192, 50304, torch.bfloat16, False), (1024, 128256, torch.bfloat16, True),
                                   (4096, 32000, torch.bfloat16, True), (2048, 32768, torch.float32, False)]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype) * 3
        want = (torch.log_softmax if log else torch.softmax)(x.float(), -1)
        moved = 2 * x.numel() * x.element_size()
        print(f"{rows}x{cols} {str(dtype)[6:]} {'log_softmax' if log else 'softmax'} (row {cols * x.element_size() >> 10} KB)"
              f" floor {moved / rate / 1e6:.4f} ms", flush=True)
        res = []
        for cb, w in [(2048, 4), (4096, 8), (4096, 16), (8192, 16), (8192, 32), (16384, 32), (32768, 32)]:
            for name in ("plain", "plain-rev", "prefetch", "prefetch-rev"):
                y = torch.empty_like(x)
                rev = name.endswith("rev")
                if name.startswith("plain"):
                    kern, extra = (reverse_rows, {}) if rev else (two_pass_rows, dict(KEEP=True))
                else:
                    kern, extra = prefetch_rows, dict(REV=rev)
                run = lambda: kern[(rows,)](x, y, cols, CB=cb, LOG=log, num_warps=w, **extra)
                try:
                    k = run()
                except Exception as e:  # a variant that does not compile at this size
                    print(f"  {name} CB={cb} warps={w} failed: {str(e).splitlines()[0][:100]}")
                    continue
                err = (y.float() - want).abs().max().item()
                ms = do_bench(run, warmup=20, rep=200, return_mode="median")
                res.append((ms, f"  {name:12s} CB={cb:5d} warps={w:2d} {ms:.4f} ms {ms / (moved / rate / 1e6):.2f}x floor "
                                f"regs={k.n_regs} spills={k.n_spills} max_err={err:.2e}"))
        for _, line in sorted(res)[:10]:
            print(line, flush=True)


def reverse_only():
    """Two passes, the second forward (the template's) or last chunk first, on long rows."""
    rate = _copy_rate()
    for rows, cols, dtype, log in [(8192, 50304, torch.bfloat16, False), (1024, 128256, torch.bfloat16, True),
                                   (4096, 32000, torch.bfloat16, True), (2048, 32768, torch.float32, False),
                                   (4096, 65536, torch.bfloat16, False)]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype) * 3
        want = (torch.log_softmax if log else torch.softmax)(x.float(), -1)
        moved = 2 * x.numel() * x.element_size()
        print(f"{rows}x{cols} {str(dtype)[6:]} {'log_softmax' if log else 'softmax'} (row {cols * x.element_size() >> 10} KB)"
              f" floor {moved / rate / 1e6:.4f} ms")
        for cb, w in [(4096, 8), (4096, 16), (8192, 16), (8192, 32), (16384, 32), (32768, 32)]:
            for name, kern in [("forward", two_pass_rows), ("reverse", reverse_rows)]:
                y = torch.empty_like(x)
                extra = dict(KEEP=True) if kern is two_pass_rows else {}
                run = lambda: kern[(rows,)](x, y, cols, CB=cb, LOG=log, num_warps=w, **extra)
                k = run()
                err = (y.float() - want).abs().max().item()
                ms = do_bench(run, warmup=20, rep=200, return_mode="median")
                print(f"  {name} CB={cb:5d} warps={w:2d} {ms:.4f} ms {moved / ms / 1e6:5.0f} GB/s "
                      f"{ms / (moved / rate / 1e6):.2f}x floor regs={k.n_regs} max_err={err:.2e}")


def turns_only():
    """The two-pass schedule with the rows in flight bounded by the grid, on LLM-vocabulary rows."""
    torch.manual_seed(0)
    for rows, cols, dtype, log in [(1024, 128256, torch.bfloat16, True), (8192, 50304, torch.bfloat16, False),
                                   (4096, 32000, torch.bfloat16, True)]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype) * 3
        want = (torch.log_softmax if log else torch.softmax)(x.float(), -1)
        moved = 2 * x.numel() * x.element_size()
        print(f"{rows}x{cols} {str(dtype)[6:]} {'log_softmax' if log else 'softmax'} (row {cols * x.element_size() >> 10} KB)")
        for cb, w in [(8192, 16), (16384, 32), (32768, 32)]:
            y = torch.empty_like(x)
            run = lambda: two_pass_rows[(rows,)](x, y, cols, CB=cb, LOG=log, KEEP=True, num_warps=w)
            k = run()
            ms = do_bench(run, warmup=20, rep=200, return_mode="median")
            print(f"  two_pass CB={cb:5d} warps={w:2d} {ms:.4f} ms {moved / ms / 1e6:5.0f} GB/s regs={k.n_regs}")
        for xb in (2, 4, 8, 16, 32, 64):
            if rows // xb < 64:
                break
            for cb, w in [(8192, 16), (8192, 32), (16384, 32)]:
                y = torch.empty_like(x)
                grid = (triton.cdiv(rows, xb),)
                run = lambda: turns_rows[grid](x, y, rows, cols, CB=cb, XB=xb, LOG=log, num_warps=w)
                k = run()
                err = (y.float() - want).abs().max().item()
                ms = do_bench(run, warmup=20, rep=200, return_mode="median")
                print(f"  turns XB={xb:2d} programs={grid[0]:5d} CB={cb:5d} warps={w:2d} {ms:.4f} ms "
                      f"{moved / ms / 1e6:5.0f} GB/s regs={k.n_regs} max_err={err:.2e}")


def main():
    torch.manual_seed(0)
    for rows, cols, dtype, log in [(4096, 32000, torch.bfloat16, True), (8192, 32768, torch.bfloat16, False),
                                   (2048, 32768, torch.float32, False), (8192, 8192, torch.bfloat16, False)]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype) * 3
        want = (torch.log_softmax if log else torch.softmax)(x.float(), -1)
        rb = triton.next_power_of_2(cols)
        moved = 2 * x.numel() * x.element_size()
        ref = torch.compile(lambda t: (torch.log_softmax if log else torch.softmax)(t, -1))
        ref(x)
        ms = do_bench(lambda: ref(x), warmup=20, rep=200, return_mode="median")
        print(f"{rows}x{cols} {str(dtype)[6:]} {'log_softmax' if log else 'softmax'}: "
              f"torch.compile {ms:.4f} ms {moved / ms / 1e6:.0f} GB/s")
        for name, kern in [("f32", f32_rows), ("narrow", narrow_rows), ("halves", halves_rows)]:
            for w in (8, 16, 32):
                y = torch.empty_like(x)
                try:
                    k = kern[(rows,)](x, y, cols, RB=rb, LOG=log, num_warps=w)
                    err = (y.float() - want).abs().max().item()
                    ms = do_bench(lambda: kern[(rows,)](x, y, cols, RB=rb, LOG=log, num_warps=w),
                                  warmup=20, rep=200, return_mode="median")
                    print(f"  {name:7s} warps={w:2d} {ms:.4f} ms {moved / ms / 1e6:5.0f} GB/s "
                          f"regs={k.n_regs} spills={k.n_spills} max_err={err:.2e}")
                except Exception as e:  # a variant that does not compile at this size
                    print(f"  {name:7s} warps={w:2d} failed: {str(e).splitlines()[0][:120]}")
        for keep in (False, True):
            for cb in (1024, 2048, 4096, 8192):
                for w in (4, 8, 16):
                    if cb // (32 * w) < 4:
                        continue
                    y = torch.empty_like(x)
                    run = lambda: two_pass_rows[(rows,)](x, y, cols, CB=cb, LOG=log, KEEP=keep, num_warps=w)
                    k = run()
                    err = (y.float() - want).abs().max().item()
                    ms = do_bench(run, warmup=20, rep=200, return_mode="median")
                    print(f"  two_pass CB={cb:5d} warps={w:2d} keep={int(keep)} {ms:.4f} ms {moved / ms / 1e6:5.0f} GB/s "
                          f"regs={k.n_regs} spills={k.n_spills} max_err={err:.2e}")


if __name__ == "__main__":
    import sys
    {"turns": turns_only, "reverse": reverse_only, "prefetch": prefetch_only}.get(sys.argv[1] if sys.argv[1:] else "", main)()
