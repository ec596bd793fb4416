"""Probe: the cooperative split's modules (kernelopt candidates --regions) against the baseline module, with
variants of the flag wait, on the GPU. Usage: coop_probe.py PROBLEM_DIR... (each: bundle/ and regions/)."""
import importlib.util, json, os, sys, time, torch

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

def timed(fn, reps=15):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]

VARIANTS = {"as_is": []}


def padded(text):
    """The cooperative form with each tile's count on its own 128-byte line (a false-sharing hypothesis)."""
    import re
    m = re.search(r"_coop_flags\.run\((buf_seg\d+_flags), (\d+), 1,", text)
    if not m or "sync + (1 + kopt_tile)" not in text:
        return None
    name, n = m.group(1), int(m.group(2))
    new = 32 + 32 * (n - 1)
    text = text.replace("sync + (1 + kopt_tile)", "sync + (32 + 32 * kopt_tile)")
    text = text.replace(f"{name} = empty_strided_cuda(({n}, ), (1, ), torch.int32)", f"{name} = empty_strided_cuda(({new}, ), (1, ), torch.int32)")
    text = text.replace(f".run({name}, {n}, 1,", f".run({name}, {new}, 1,")
    return text.replace(f"    xnumel = {n}\n", f"    xnumel = {new}\n", 1)

def main():
    tmp = "/tmp/coop_probe"; os.makedirs(tmp, exist_ok=True)
    for d in sys.argv[1:]:
        meta = json.load(open(f"{d}/bundle/meta.json"))
        print(f"== {os.path.basename(d)}", flush=True)
        base = load(f"{d}/bundle/module_0.py", "base_" + str(abs(hash(d))))
        args = make_args(meta)
        ref = base.call(list(args))[0]
        tb = timed(lambda: base.call(list(args)))
        print(f"  baseline {tb:.3f} ms", flush=True)
        rdir = f"{d}/regions"
        for sub in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
            for f in sorted(os.listdir(f"{rdir}/{sub}")):
                src = open(f"{rdir}/{sub}/{f}").read()
                names = ["as_is"] + (["padded"] if padded(src) else [])
                for v in names:
                    text = src if v != "padded" else padded(src)
                    for a, b in VARIANTS.get(v, []):
                        if a not in text: print(f"  {f} {v}: pattern missing: {a[:60]!r}"); break
                        text = text.replace(a, b)
                    else:
                        path = f"{tmp}/{os.path.basename(d)}_{sub}_{f[:-3]}_{v}.py"
                        open(path, "w").write(text)
                        try:
                            m = load(path, f"m_{abs(hash(path))}")
                            t0 = time.time()
                            out = m.call(list(args))[0]
                            torch.cuda.synchronize()
                            err = (out.float() - ref.float()).abs().max().item()
                            t = timed(lambda: m.call(list(args)))
                            print(f"  {f} {v}: {t:.3f} ms ({tb / t:.2f}x) max_abs_err {err:.2e} first {time.time()-t0:.1f}s", flush=True)
                            del out
                        except Exception as e:
                            print(f"  {f} {v}: error {type(e).__name__}: {str(e)[:300]}", flush=True)
        del args, ref
        torch.cuda.empty_cache()

main()
