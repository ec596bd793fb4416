"""Schedules for a stride-1 2-D pool (max or average, KxK window, padding P) over contiguous NCHW planes,
timed directly on the GPU: how the pool template should read an input row. The template streams each
plane's rows once (K-1 window rows carried in registers), but reads every new input row K times, once per
horizontal offset, as K unaligned one-element-per-thread loads; at 4x4 that is four L1 requests per
output element and measured 1.41x the floor. Variants:

  shifted  the template's form: K shifted loads per input row
  chunked  each thread owns V consecutive columns: the row is read as aligned V-wide vectors (the
           thread's own chunk, plus its left / right neighbours' chunks where the window reaches them),
           split into columns in registers, the K-wide window combined there and joined back, so an
           input row costs at most 3 vector loads per V outputs

  walk     the chunked form with tiles of 8 to 128 output rows, unrolled or as a tl.range loop: a
           tile re-reads the K-1 input rows above it that the tile before it read (the halo), which a
           longer walk shares over more rows

Usage: python3 benchmarks/pool_rows.py [check|walk]   (`check`: the forms against torch on small planes in the
Triton interpreter, TRITON_INTERPRET=1; otherwise prints ms and the ratio to a copy of the same bytes, best first,
per problem; every variant is checked against torch first; `walk`: only the walk-length variants)
"""
import importlib.util
import os
import sys
import tempfile

import torch
import triton
from triton.testing import do_bench

HEADER = "import triton\nimport triton.language as tl\n\n"


def _combine(mx, a, b):
    return f"tl.maximum({a}, {b})" if mx else f"{a} + {b}"


def _reduce(mx, terms):
    acc = terms[0]
    for t in terms[1:]:
        acc = _combine(mx, acc, t)
    return acc


def _stream_rows(row, mx, K, P, RH, col, loop=False):
    """Both forms' walk down a tile: the first K-1 window rows, then per output row its one new input row,
    the window combined and stored at column `col`, the last K-1 rows carried (through a tl.range loop
    with `loop`, else unrolled)."""
    src = "".join(row(f"c{dy}", f"oh0 + {dy - P}", "    ") for dy in range(K - 1))
    src += f"    for rr in tl.{'range' if loop else 'static_range'}(0, {RH}):\n        oh = oh0 + rr\n"
    src += row("n0", f"oh + {K - 1 - P}", "        ")
    win = [f"c{d}" for d in range(K - 1)] + ["n0"]
    src += f"        acc = {_reduce(mx, win)}\n"
    if not mx:
        src += f"        acc = acc / {K * K}.0\n"
    src += f"        tl.store(base_out + oh * WO + {col}, acc, omask & (oh < HO))\n"
    return src + "".join(f"        c{dy} = {win[dy + 1]}\n" for dy in range(K - 1))


def shifted_source(mx, K, P, H, W, RH, BW, G):
    """The template's per-row form: K shifted loads per input row, [G, BW] tiles."""
    HO, WO = H + 2 * P - K + 1, W + 2 * P - K + 1
    neutral = "float('-inf')" if mx else "0.0"
    cb = (WO + BW - 1) // BW
    rc = (HO + RH - 1) // RH

    def row(var, ih, ind):
        s = f"{ind}ih = {ih}\n{ind}rok = (ih >= 0) & (ih < H)\n"
        for dx in range(K):
            s += f"{ind}iw = ow + {dx - P}\n"
            s += f"{ind}v = tl.load(base_in + ih * W + iw, omask & rok & (iw >= 0) & (iw < W), other={neutral})\n"
            s += f"{ind}{var} = v\n" if dx == 0 else f"{ind}{var} = {_combine(mx, var, 'v')}\n"
        return s

    src = "@triton.jit\ndef pool(x_ptr, y_ptr, units):\n"
    src += f"    H: tl.constexpr = {H}\n    W: tl.constexpr = {W}\n    HO: tl.constexpr = {HO}\n    WO: tl.constexpr = {WO}\n"
    src += f"    unit = tl.program_id(0) * {G} + tl.arange(0, {G})[:, None]\n"
    src += f"    plane = unit // {rc * cb}\n    rest = unit % {rc * cb}\n"
    src += f"    oh0 = (rest // {cb}) * {RH}\n    ow = (rest % {cb}) * {BW} + tl.arange(0, {BW})[None, :]\n"
    src += "    omask = (ow < WO) & (unit < units)\n"
    src += "    base_in = x_ptr + plane * (H * W)\n    base_out = y_ptr + plane * (HO * WO)\n"
    return src + _stream_rows(row, mx, K, P, RH, "ow"), rc * cb


def _split_cols(var, V, rows):
    """Python lines that split a [rows, V] tile into V [rows] columns named {var}_0 .. {var}_{V-1}."""
    bits = V.bit_length() - 1
    lines = [f"t = tl.reshape({var}, [{rows}{', 2' * bits}])"]
    # Splitting the last dimension peels the lowest index bit: after b splits the parts hold the
    # elements whose low b bits are the parts' path.
    parts = {(): "t"}
    for b in range(bits):
        nxt = {}
        for path, name in parts.items():
            lo, hi = f"{name}_e", f"{name}_o"
            lines.append(f"{lo}, {hi} = tl.split({name})")
            nxt[path + (0,)] = lo
            nxt[path + (1,)] = hi
        parts = nxt
    for path, name in parts.items():
        idx = sum(bit << i for i, bit in enumerate(path))
        lines.append(f"{var}_{idx} = {name}")
    return lines


def _join_cols(names, rows, out):
    """Lines that join V [rows] columns (in order) back into one [rows, V] tile named out."""
    V = len(names)
    bits = V.bit_length() - 1
    # Join pairs from the highest index bit down: join(x, y) appends a size-2 last dimension.
    level = list(names)
    lines = []
    k = 0
    for b in range(bits):
        half = len(level) // 2
        nxt = []
        for i in range(half):
            nm = f"j{k}"
            k += 1
            lines.append(f"{nm} = tl.join({level[i]}, {level[i + half]})")
            nxt.append(nm)
        level = nxt
    lines.append(f"{out} = tl.reshape({level[0]}, [{rows}, {V}])")
    return lines


def chunked_source(mx, K, P, H, W, RH, BW, G, V, loop=False):
    """Each thread holds V consecutive columns; aligned vector loads, the window combined in registers."""
    HO, WO = H + 2 * P - K + 1, W + 2 * P - K + 1
    neutral = "float('-inf')" if mx else "0.0"
    cb = (WO + BW - 1) // BW
    rc = (HO + RH - 1) // RH
    C = BW // V
    GC = G * C
    left, right = P > 0, K - 1 - P > 0
    assert P <= V and K - 1 - P <= V

    def row(var, ih, ind):
        out = [f"ih = {ih}", "rok = (ih >= 0) & (ih < H) & live", "ptr = base_in + ih * W + col"]
        out.append(f"m = tl.load(ptr, rok & (col < W), other={neutral})")
        ext = {}
        out += _split_cols("m", V, GC)
        for j in range(V):
            ext[j] = f"m_{j}"
        if left:
            out.append(f"lf = tl.load(ptr - {V}, rok & (col >= {V}), other={neutral})")
            out += _split_cols("lf", V, GC)
            for j in range(V):
                ext[j - V] = f"lf_{j}"
        if right:
            out.append(f"rt = tl.load(ptr + {V}, rok & (col + {V} < W), other={neutral})")
            out += _split_cols("rt", V, GC)
            for j in range(V):
                ext[V + j] = f"rt_{j}"
        for j in range(V):
            out.append(f"h_{j} = {_reduce(mx, [ext[j + dx - P] for dx in range(K)])}")
        out += _join_cols([f"h_{j}" for j in range(V)], GC, var)
        return "".join(f"{ind}{line}\n" for line in out)

    src = "@triton.jit\ndef pool(x_ptr, y_ptr, units):\n"
    src += f"    H: tl.constexpr = {H}\n    W: tl.constexpr = {W}\n    HO: tl.constexpr = {HO}\n    WO: tl.constexpr = {WO}\n"
    src += f"    r = tl.arange(0, {GC})[:, None]\n"
    src += f"    unit = tl.program_id(0) * {G} + r // {C}\n"
    src += "    live = unit < units\n"
    src += f"    plane = unit // {rc * cb}\n    rest = unit % {rc * cb}\n"
    src += f"    oh0 = (rest // {cb}) * {RH}\n"
    src += f"    col = (rest % {cb}) * {BW} + (r % {C}) * {V} + tl.arange(0, {V})[None, :]\n"
    src += "    omask = (col < WO) & live\n"
    src += "    base_in = x_ptr + plane * (H * W)\n    base_out = y_ptr + plane * (HO * WO)\n"
    return src + _stream_rows(row, mx, K, P, RH, "col", loop), rc * cb


_DIR = tempfile.mkdtemp(prefix="pool_rows_")
_N = [0]


def load(src):
    """triton.jit reads its function's source from a file: write the generated text to one."""
    _N[0] += 1
    path = os.path.join(_DIR, f"pool_{_N[0]}.py")
    with open(path, "w") as f:
        f.write(HEADER + src)
    spec = importlib.util.spec_from_file_location(f"pool_{_N[0]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.pool


PROBLEMS = [  # name, max?, K, P, N, C, H, W
    ("max_pool 4x4 s1 p0 16x32x256x256", True, 4, 0, 16, 32, 256, 256),
    ("max_pool 3x3 s1 p1 16x64x128x128", True, 3, 1, 16, 64, 128, 128),
    ("avg_pool 3x3 s1 p1 16x64x128x128", False, 3, 1, 16, 64, 128, 128),
]


def check():
    """Every generated form against torch on small planes, in the Triton interpreter (no GPU needed)."""
    bad = 0
    for name, mx, K, P, *_ in PROBLEMS:
        for H, W in ((9, 32), (16, 64), (7, 40)):
            x = torch.randn(3, 2, H, W)
            ref = (torch.nn.functional.max_pool2d(x, K, 1, P) if mx else torch.nn.functional.avg_pool2d(x, K, 1, P))
            for kind in ("shifted", "chunked", "looped"):
                for RH, G, V in ((4, 1, 4), (8, 2, 8), (4, 2, 4)):
                    kw = dict(RH=RH, BW=32, G=G) | ({"V": V} if kind != "shifted" else {})
                    kw |= {"loop": True} if kind == "looped" else {}
                    s, per_plane = (shifted_source if kind == "shifted" else chunked_source)(mx, K, P, H, W, **kw)
                    y = torch.full_like(ref, float("nan"))
                    units = 6 * per_plane
                    load(s)[((units + G - 1) // G,)](x, y, units)
                    ok = torch.allclose(y, ref, atol=1e-5, rtol=1e-5)
                    bad += not ok
                    print(f"{'ok ' if ok else 'BAD'} {name} {H}x{W} {kind} {kw}")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["check"]:
        return check()
    walk = sys.argv[1:] == ["walk"]
    torch.manual_seed(0)
    for name, mx, K, P, N, Cc, H, W in PROBLEMS:
        x = torch.randn(N, Cc, H, W, device="cuda")
        ref = (torch.nn.functional.max_pool2d(x, K, 1, P) if mx else
               torch.nn.functional.avg_pool2d(x, K, 1, P))
        y = torch.empty_like(ref)
        planes = N * Cc
        dst = torch.empty_like(x)
        copy_ms = do_bench(lambda: dst.copy_(x), warmup=50, rep=300, return_mode="median")
        floor_bytes = (x.numel() + ref.numel()) * 4
        print(f"\n{name}: copy of the input {copy_ms:.4f} ms; in+out {floor_bytes / 1e6:.0f} MB", flush=True)
        rows = []
        variants = []
        WO = W + 2 * P - K + 1
        BW = triton.next_power_of_2(WO)
        if walk:  # how far a tile walks down its plane: halo rows re-read per tile against registers
            for RH in (8, 16, 32, 64, 128):
                for G in (1, 2, 4):
                    for loop in (False, True):
                        if RH <= 32 or loop:
                            variants.append(("chunked", dict(RH=RH, BW=BW, G=G, V=4, loop=loop), None))
        else:
            for RH in (8, 16):
                for G in (1, 2, 4):
                    variants.append(("shifted", dict(RH=RH, BW=BW, G=G), None))
                    for V in (4, 8):
                        variants.append(("chunked", dict(RH=RH, BW=BW, G=G, V=V), None))
        for kind, kw, _ in variants:
            try:
                if kind == "shifted":
                    s, per_plane = shifted_source(mx, K, P, H, W, **kw)
                    elems = kw["G"] * kw["BW"]
                else:
                    s, per_plane = chunked_source(mx, K, P, H, W, **kw)
                    elems = kw["G"] * kw["BW"]
                fn = load(s)
                units = planes * per_plane
                grid = ((units + kw["G"] - 1) // kw["G"],)
                for warps in (1, 2, 4, 8):
                    per_thread = elems // (32 * warps)
                    if per_thread < 2 or per_thread > 16:
                        continue
                    y.fill_(float("nan"))
                    fn[grid](x, y, units, num_warps=warps)
                    torch.cuda.synchronize()
                    if not torch.allclose(y, ref, atol=1e-5, rtol=1e-5):
                        print(f"  WRONG {kind} {kw} warps={warps}: max err {(y - ref).abs().max().item()}")
                        continue
                    ms = do_bench(lambda: fn[grid](x, y, units, num_warps=warps), warmup=20, rep=200,
                                  return_mode="median")
                    rows.append((ms, kind, kw, warps))
            except Exception as e:  # a variant that does not compile is reported, not fatal
                print(f"  FAILED {kind} {kw}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        rows.sort(key=lambda r: r[0])
        best = {}
        for ms, kind, kw, warps in rows:
            best.setdefault(f"{kind} RH={kw['RH']}{' loop' if kw.get('loop') else ''}" if walk else kind, ms)
        for ms, kind, kw, warps in rows[:12]:
            print(f"  {ms:.4f} ms  {ms / copy_ms:.2f}x copy  {floor_bytes / ms / 1e6:.0f} GB/s  {kind} {kw} warps={warps}")
        print("  best per form: " + ", ".join(f"{k} {v:.4f} ms" for k, v in best.items()), flush=True)


if __name__ == "__main__":
    sys.exit(main())
