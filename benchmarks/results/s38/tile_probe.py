"""Probe (session 38, H100): where the time of two remaining rows of draw 33811 goes, kernel by kernel.

Row 46 (softmax over 1873 rows of 1.2M bf16, read along and written across): the region's two-launch split
(kernelopt candidates --regions), each launch timed alone, and the apply launch's tile / warps / stages and the
statistics launch's block varied. Row 53 (log-softmax over dim 0 of a channels-last 693 x 45 x 165 x 257 bf16):
the accepted pointwise kernel (3-D tiles, the two per-column statistics loaded again for every tile of n)
against a form that loops over n inside the program with the statistics loaded once.

    python tile_probe.py R46_DIR R53_DIR     (R46_DIR: bundle/ and regions/; R53_DIR: bundle/ and accepted.py)
"""
import collections, importlib.util, json, math, os, re, sys, time
import torch
import triton
import triton.language as tl

TMP = "/tmp/tile_probe"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def make_args(meta):
    g = torch.Generator(device="cuda").manual_seed(0)
    out = []
    for a in meta["graphs"][0]["args"]:
        dt = getattr(torch, a["dtype"])
        n = sum((s - 1) * st for s, st in zip(a["shape"], a["stride"])) + 1 if a["shape"] else 1
        base = torch.empty(n + a.get("storage_offset", 0), device="cuda", dtype=dt)
        base.normal_(generator=g)
        out.append(torch.as_strided(base, a["shape"], a["stride"], a.get("storage_offset", 0)))
    return out


def per_kernel(m, args, reps=10):
    """Median ms of each Triton launch of m.call, and of the whole call (events around each launch)."""
    rec = collections.defaultdict(list)
    for name in dir(m):
        k = getattr(m, name)
        if name.startswith("triton_") and hasattr(k, "run"):
            def wrap(orig, name=name):
                def run(*a, **kw):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record(); r = orig(*a, **kw); e.record(); rec[name].append((s, e))
                    return r
                return run
            k.run = wrap(k.run)
    out = m.call(list(args)); torch.cuda.synchronize(); del out
    rec.clear()
    whole = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); o = m.call(list(args)); e.record(); torch.cuda.synchronize(); del o
        whole.append(s.elapsed_time(e))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return med(whole), {n: med([s.elapsed_time(e) for s, e in v]) for n, v in rec.items()}


def copy_rates(x):
    """What plain copies of x reach: the same layout, and into the other layout (a transpose)."""
    def t(fn, reps=10):
        fn(); torch.cuda.synchronize(); ts = []
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
        return sorted(ts)[reps // 2]
    same = torch.empty_like(x)
    other = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    gb = 2 * x.numel() * x.element_size() / 1e9
    a, b = t(lambda: same.copy_(x)), t(lambda: other.copy_(x))
    print(f"  copy same layout {a:.3f} ms ({gb / a:.0f} GB/ms... {gb / a * 1e3 / 1e3:.2f} TB/s); into the other layout {b:.3f} ms ({gb / b:.2f} TB/s)", flush=True)
    del same, other


def apply_variant(src, xb, rb, w, st, evict=True, rows=1873, nseg=None):
    """The region module with the apply launch's config (and its grid) changed."""
    head, sep, tail = src.partition("_seg_apply', '''")
    if not sep:
        return None
    tail = re.sub(r"config=\{'XBLOCK': \d+, 'R0_BLOCK': \d+, 'num_warps': \d+, 'num_stages': \d+\}",
                  f"config={{'XBLOCK': {xb}, 'R0_BLOCK': {rb}, 'num_warps': {w}, 'num_stages': {st}}}", tail, count=1)
    if not evict:
        tail = tail.replace(", eviction_policy='evict_first'", "", 1)
    nseg = int(re.search(r"NSEG: tl.constexpr = (\d+)", tail).group(1))
    text = head + sep + tail
    return re.sub(r"(_seg_apply\.run\([^)]*?, buf_seg0, )(\d+)(, )",
                  lambda mm: f"{mm.group(1)}{math.ceil(rows / xb) * xb * nseg}{mm.group(3)}", text)


def stats_variant(src, rb, w):
    head, sep, tail = src.partition("_seg_stats', '''")
    tail = re.sub(r"config=\{'XBLOCK': 1, 'R0_BLOCK': \d+, 'num_warps': \d+, 'num_stages': \d+\}",
                  f"config={{'XBLOCK': 1, 'R0_BLOCK': {rb}, 'num_warps': {w}, 'num_stages': 1}}", tail, count=1)
    return head + sep + tail


def row46(d):
    print(f"== row 46: {d}", flush=True)
    meta = json.load(open(f"{d}/bundle/meta.json"))
    args = make_args(meta)
    copy_rates(args[0])
    base = load(f"{d}/bundle/module_0.py", "b46")
    ref = base.call(list(args))[0]
    tb, kb = per_kernel(base, args, reps=5)
    print(f"  baseline {tb:.3f} ms {kb}", flush=True)
    src = open(f"{d}/regions/g0-r0/001-split_segments.py").read()
    variants = [("as proposed 001", src)]
    for f in sorted(os.listdir(f"{d}/regions/g0-r0"))[1:]:
        variants.append((f"as proposed {f[:3]}", open(f"{d}/regions/g0-r0/{f}").read()))
    for xb, rb, w, st in [(32, 64, 4, 1), (32, 128, 8, 1), (64, 64, 8, 1), (64, 128, 8, 1), (64, 128, 16, 1),
                          (128, 64, 8, 1), (64, 256, 16, 1), (32, 256, 8, 1), (16, 256, 8, 1), (32, 64, 8, 2),
                          (64, 64, 8, 2), (64, 128, 8, 3)]:
        variants.append((f"apply XB{xb} RB{rb} w{w} s{st}", apply_variant(src, xb, rb, w, st)))
    variants.append(("apply XB32 RB64 w8 s1 no evict", apply_variant(src, 32, 64, 8, 1, evict=False)))
    for rb, w in [(1024, 4), (4096, 8), (4096, 16), (8192, 16)]:
        variants.append((f"stats RB{rb} w{w}", stats_variant(src, rb, w)))
    os.makedirs(TMP, exist_ok=True)
    for i, (name, text) in enumerate(variants):
        path = f"{TMP}/r46_{i}.py"
        open(path, "w").write(text)
        try:
            t0 = time.time()
            m = load(path, f"r46_{i}")
            out = m.call(list(args))[0]; torch.cuda.synchronize()
            err = (out.float() - ref.float()).abs().max().item(); del out
            t, ks = per_kernel(m, args, reps=7)
            ks = {k.rsplit("_", 1)[-1]: round(v, 3) for k, v in ks.items()}
            print(f"  {name}: {t:.3f} ms ({tb / t:.2f}x) {ks} err {err:.1e} ({time.time() - t0:.1f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 - a probe: report and go on
            print(f"  {name}: failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
    del args, ref


@triton.jit
def _ls_apply_loop(x_ptr, m_ptr, s_ptr, out_ptr, N, HW, C: tl.constexpr, NCH: tl.constexpr,
                   ZB: tl.constexpr, CB: tl.constexpr):
    # out[n, c, hw] = x[n, hw, c] - max[hw, c] - log(sum[hw, c]); the statistics once, n looped.
    z = tl.program_id(0) * ZB + tl.arange(0, ZB)[:, None]
    c = tl.arange(0, CB)[None, :]
    mask = (z < HW) & (c < C)
    off = c + C * z
    sub = tl.load(m_ptr + off, mask, other=0.0) + tl.log(tl.load(s_ptr + off, mask, other=1.0))
    n0 = tl.program_id(1) * NCH
    for n in range(n0, tl.minimum(n0 + NCH, N)):
        v = tl.load(x_ptr + (off + n.to(tl.int64) * HW * C), mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + (z + HW * c + n.to(tl.int64) * HW * C), (v - sub).to(out_ptr.dtype.element_ty), mask)


def row53(d):
    print(f"== row 53: {d}", flush=True)
    meta = json.load(open(f"{d}/bundle/meta.json"))
    args = make_args(meta)
    base = load(f"{d}/bundle/module_0.py", "b53")
    ref = base.call(list(args))[0]
    tb, kb = per_kernel(base, args, reps=5)
    print(f"  baseline {tb:.3f} ms {kb}", flush=True)
    acc = load(f"{d}/accepted.py", "a53")
    ta, ka = per_kernel(acc, args, reps=7)
    print(f"  accepted {ta:.3f} ms ({tb / ta:.2f}x) {ka}", flush=True)
    x = args[0]
    N, C, H, W = x.shape
    HW = H * W
    mx = torch.empty((HW * C,), device="cuda", dtype=torch.float32)
    sm = torch.empty_like(mx)
    acc.triton_red_fused__log_softmax_prepare_softmax_online_0.run(x, mx, sm, HW * C, N, stream=torch.cuda.current_stream().cuda_stream)
    out = torch.empty((N, C, H, W), device="cuda", dtype=x.dtype)
    for zb, nch, w in [(64, 64, 4), (64, 128, 4), (128, 64, 8), (128, 128, 8), (32, 64, 4), (64, 32, 4), (256, 64, 8)]:
        grid = (triton.cdiv(HW, zb), triton.cdiv(N, nch))
        fn = lambda: _ls_apply_loop[grid](x, mx, sm, out, N, HW, C=C, NCH=nch, ZB=zb, CB=64, num_warps=w)
        try:
            fn(); torch.cuda.synchronize()
            err = (out.float() - ref.float()).abs().max().item()
            ts = []
            for _ in range(7):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
            print(f"  loop over n: ZB{zb} NCH{nch} w{w}: {sorted(ts)[3]:.3f} ms, err {err:.1e}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"  loop over n ZB{zb}: failed: {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), flush=True)
    if len(sys.argv) > 2:
        row53(sys.argv[2])
    row46(sys.argv[1])
