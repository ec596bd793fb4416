#!/usr/bin/env python3
"""Time one Inductor kernel of a captured module over a grid of launch configs (a GPU-side probe).

    python3 tools/config_sweep.py MODULE.py KERNEL_NAME [--x 256,512,...] [--r 1,2,4] [--y ...]
                                  [--warps 4,8] [--stages 1,2] [--out sweep.jsonl]

MODULE.py is a bundle's module (`kernelopt inspect` names its kernels). The module's `call()` runs once on
`get_args()` with the kernel's `run` wrapped to record its arguments; every config then launches the kernel's
JIT function on those arguments directly and is timed with `triton.testing.do_bench` (L2 cleared between
runs). Each line of the output says the config, its median ms, its ratio to the captured config and whether
its outputs equal the captured config's (bitwise for integers, 1e-3 relative otherwise: a config changes
the reduction order). Used to learn which tiles a kernel form wants before the config space ranks them
(docs/optimize.md); it changes nothing in the bundle.
"""
import argparse
import importlib.util
import itertools
import json
import sys

import torch
import triton
import triton.testing


def load(path):
    spec = importlib.util.spec_from_file_location("swept_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ints(text):
    return [int(v) for v in text.split(",") if v]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module")
    ap.add_argument("kernel")
    for axis in ("x", "y", "z", "r"):
        ap.add_argument(f"--{axis}", default="", help=f"{axis.upper()} block values, comma-separated")
    ap.add_argument("--warps", default="4,8")
    ap.add_argument("--stages", default="1")
    ap.add_argument("--out", default="")
    ap.add_argument("--rep", type=int, default=50, help="do_bench's rep (ms)")
    a = ap.parse_args()

    mod = load(a.module)
    kern = getattr(mod, a.kernel, None)
    if kern is None or not hasattr(kern, "fn"):
        sys.exit(f"config_sweep: error: {a.kernel} is not a Triton kernel of {a.module}; name one its call() launches")
    seen = {}
    real_run = kern.run

    def recording_run(*args, **kwargs):
        seen.setdefault("args", args)
        return real_run(*args, **kwargs)

    kern.run = recording_run
    mod.call(list(mod.get_args()))
    torch.cuda.synchronize()
    kern.run = real_run
    if "args" not in seen:
        sys.exit(f"config_sweep: error: call() never launched {a.kernel}")
    args = seen["args"]
    names = list(kern.fn.arg_names)
    constexprs = {names[i] for i in kern.fn.constexprs}
    runtime = [n for n in names if n not in constexprs]
    numel = {n[:-5].rstrip("_").upper(): v for n, v in zip(runtime, args) if n.endswith("numel")}
    blocks = [n for n in names if n in constexprs and n.endswith("BLOCK")]
    # The captured config: Inductor drops `configs` once its launchers are built (by the call above).
    configs = list(getattr(kern, "configs", None) or []) or [lau.config for lau in getattr(kern, "launchers", None) or []]
    if not configs:
        sys.exit(f"config_sweep: error: {a.kernel} has no config to start from (neither configs nor launchers)")
    base = {k: v for k, v in configs[0].kwargs.items() if k in blocks}
    base_w, base_s = configs[0].num_warps, configs[0].num_stages

    def grid(cfg):
        g = [1, 1, 1]
        for i, d in enumerate(("X", "Y", "Z")):
            if f"{d}BLOCK" in cfg and d in numel:
                g[i] = triton.cdiv(numel[d], cfg[f"{d}BLOCK"])
        return tuple(g)

    def launch(cfg, w, s):
        kern.fn[grid(cfg)](*args, **cfg, num_warps=w, num_stages=s)

    tensors = [i for i, v in enumerate(args) if isinstance(v, torch.Tensor)]

    def outputs():
        return [args[i].clone() for i in tensors]

    launch(base, base_w, base_s)
    torch.cuda.synchronize()
    want = outputs()
    base_ms = triton.testing.do_bench(lambda: launch(base, base_w, base_s), rep=a.rep)
    choices = {"XBLOCK": ints(a.x), "YBLOCK": ints(a.y), "ZBLOCK": ints(a.z), "R0_BLOCK": ints(a.r)}
    axes = [b for b in blocks if choices.get(b)]
    out = open(a.out, "w") if a.out else None
    rows = [{"config": dict(base, num_warps=base_w, num_stages=base_s), "ms": base_ms, "ratio": 1.0, "same": True}]
    for vals in itertools.product(*[choices[b] for b in axes], ints(a.warps), ints(a.stages)):
        cfg = dict(base)
        cfg.update(zip(axes, vals[: len(axes)]))
        w, s = vals[len(axes)], vals[len(axes) + 1]
        row = {"config": dict(cfg, num_warps=w, num_stages=s)}
        try:
            launch(cfg, w, s)
            torch.cuda.synchronize()
            got = outputs()
            row["same"] = all(
                torch.equal(g, e) if not g.is_floating_point() else
                bool(torch.allclose(g.float(), e.float(), rtol=1e-3, atol=1e-5, equal_nan=True))
                for g, e in zip(got, want))
            row["ms"] = triton.testing.do_bench(lambda: launch(cfg, w, s), rep=a.rep)
            row["ratio"] = row["ms"] / base_ms
        except Exception as e:  # a config Triton refuses (shared memory, registers) is a row, not the end
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        rows.append(row)
        if out:
            out.write(json.dumps(row) + "\n")
    rows.sort(key=lambda r: r.get("ms", 1e9))
    print(f"{a.kernel}: numels {numel}, captured config {base} w{base_w} s{base_s}: {base_ms:.4f} ms")
    for r in rows[:12]:
        print(f"  {r.get('ms', float('nan')):.4f} ms  {r.get('ratio', float('nan')):.3f}x  same={r.get('same')}  {r['config']}")
    bad = [r for r in rows if r.get("same") is False]
    print(f"  {len(rows)} configs, {len(bad)} with different outputs, {sum('error' in r for r in rows)} refused")


if __name__ == "__main__":
    main()
