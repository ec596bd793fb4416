"""pattern:window on pools nobody here chose: window, stride, padding, dilation, ceil_mode, count mode, layout
(contiguous or channels last) and sizes drawn from a seed, each captured on this machine as Inductor writes it (`kernelopt capture --device cpu
--cpu-kernels triton`: Inductor's Triton kernels for CPU tensors, run by Triton's interpreter), then put
through the generator and the gates in CPU mode. Where consecutive output rows' windows share input rows the
separable form must be proposed and pass G1-G3 (bit-equal for a max); where they share none it must not be.

The draw is fixed (SEEDS) so that CI is repeatable; KERNELOPT_FRESH_SEED=S draws another set for a one-off
run. No speed is claimed here: the H200 times them (benchmarks/RESULTS.md)."""
import json
import os
import random
import subprocess

import pytest
from conftest import ROOT, candidate_manifest, verify_gates

SEEDS = [int(os.environ["KERNELOPT_FRESH_SEED"])] if os.environ.get("KERNELOPT_FRESH_SEED") else [1, 5, 8, 11, 13, 20, 23, 28, 58]


def draw(seed: int) -> dict:
    """One 2-D or 3-D max or average pool with its parameters and an input of odd extents."""
    rng = random.Random(seed)
    dims = rng.choice([2, 2, 3])
    kind = rng.choice(["max", "max", "avg"])
    k = [rng.randint(2, 4 if dims == 3 else 5) for _ in range(dims)]
    d = [rng.randint(1, 3) if kind == "max" else 1 for _ in range(dims)]
    s = [rng.randint(1, kk) for kk in k]
    span = [(kk - 1) * dd + 1 for kk, dd in zip(k, d)]
    p = [rng.randint(0, kk // 2) for kk in k]  # PyTorch's bound: padding at most half the kernel
    size = [rng.randint(sp + 4, sp + (14 if dims == 3 else 30)) | 1 for sp in span]
    return {"seed": seed, "dims": dims, "kind": kind, "k": k, "s": s, "p": p, "d": d, "span": span,
            "ceil": rng.random() < 0.5, "include_pad": rng.random() < 0.5,
            "shape": [rng.randint(1, 3), rng.randint(2, 5), *size],
            "channels_last": rng.random() < 0.35}


def output_rows(c: dict) -> int:
    """The pool's output extent along the walked digit, by PyTorch's rule (ceil_mode's last window must start
    inside the input or its left padding)."""
    n, p, span, s = c["shape"][-2], c["p"][-2], c["span"][-2], c["s"][-2]
    out = -(-(n + 2 * p - span) // s) + 1 if c["ceil"] else (n + 2 * p - span) // s + 1
    if c["ceil"] and (out - 1) * s >= n + p:
        out -= 1
    return out


def problem_source(c: dict) -> str:
    if c["kind"] == "max":
        pool = (f"nn.MaxPool{c['dims']}d(kernel_size={tuple(c['k'])}, stride={tuple(c['s'])}, padding={tuple(c['p'])}, "
                f"dilation={tuple(c['d'])}, ceil_mode={c['ceil']})")
    else:
        pool = (f"nn.AvgPool{c['dims']}d(kernel_size={tuple(c['k'])}, stride={tuple(c['s'])}, padding={tuple(c['p'])}, "
                f"ceil_mode={c['ceil']}, count_include_pad={c['include_pad']})")
    layout = ""
    if c["channels_last"]:
        layout = ".to(memory_format=torch.channels_last{})".format("_3d" if c["dims"] == 3 else "")
    return f'''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {pool}

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn({", ".join(map(str, c["shape"]))}){layout}]


def get_init_inputs():
    return []
'''


def run(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, env=env, **kw)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_freshly_drawn_pool_gets_the_separable_form_and_passes_the_gates(kernelopt_bin, tmp_path, seed):
    c = draw(seed)
    problem = tmp_path / "pool.py"
    problem.write_text(problem_source(c))
    r = run([kernelopt_bin, "capture", problem, "--out", tmp_path / "b", "--device", "cpu", "--cpu-kernels", "triton",
             "-q"])
    assert r.returncode == 0, (c, r.stderr)
    meta = json.loads((tmp_path / "b" / "meta.json").read_text())
    assert meta["cpu_kernels"] == "triton"
    if "@triton.jit" not in (tmp_path / "b" / "module_0.py").read_text():
        # Inductor hands some pools to aten (an average over a window of more than 25 elements, on a GPU
        # too): no Triton kernel, nothing for a generator to do.
        assert "torch.ops.aten." in (tmp_path / "b" / "module_0.py").read_text(), c
        return
    # Captured for CPU tensors: the generator and the gates run on the CPU whatever the test device.
    (kernel,) = candidate_manifest(kernelopt_bin, tmp_path / "b", tmp_path / "c", device="cpu")["kernels"]
    # Channels last: lanes own channels (loads coalesced across them), the taps run along the columns.
    prefix = "window separable, channels last:" if c["channels_last"] else "window separable:"
    separable = [x for x in kernel["candidates"] if x["description"].startswith(prefix)]
    declined = [x for x in kernel.get("declined", []) if x.startswith("pattern:window")]
    # The walked digit is the output's second-innermost (rows of a 2-D pool, rows within a plane of a
    # 3-D one): its windows overlap when the stride is below the window's span there.
    rows_shared = c["s"][-2] < c["span"][-2]
    if not rows_shared or output_rows(c) < 2:
        assert not separable, (c, [x["description"] for x in separable])
        return
    assert separable, (c, declined)
    op = "max" if c["kind"] == "max" else "sum"
    assert all(x["description"].startswith(f"{prefix} {op} of {c['k'][-1]} taps a row")
               for x in separable), (c, separable[0]["description"])
    # One of the instances (lane layouts, outputs a lane, rows walked), a different one from seed to seed.
    pick = separable[seed % len(separable)]
    gates = verify_gates(kernelopt_bin, tmp_path / "b", kernel["kernel"], tmp_path / "c" / pick["file"],
                         tmp_path / "r.db", device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, (c, pick["description"], gates)
    runs = gates["G2"]["evidence"]["runs"]
    assert all(x["match"] for x in runs)
    if op == "max":
        assert all(x["max_rel"] == 0.0 for x in runs), c
