"""The row-tiles rewrite (engine/src/agents/coder/rewrites/row_tiles.h) on normalize kernels captured on this
machine as Inductor writes them (`kernelopt capture --device cpu --cpu-kernels triton`): a batch norm in eval
mode over a bfloat16 5-D tensor (per-channel mean, variance, weight and bias by `x1 = (xindex // 1440) % 5`)
and the last kernel of a layer norm over three trailing dims that Inductor split into three kernels (per-row
mean and variance by `x1 = xindex // 32768`). Each program walks tiles of one row, the per-row loads become
scalars; every element is computed by the same expressions, so G2 finds the outputs equal on every seed.
A tile rewritten with the wrong row digit must fail G2. No speed is claimed here (benchmarks/RESULTS.md)."""
import json
import os
import subprocess

import pytest
from conftest import ROOT, candidate_manifest, verify_gates

PROBLEMS = {
    "batch_norm3d_eval_bf16": '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm3d(5)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-1, 1)
        self.eval()

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(3, 5, 4, 9, 40, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
''',
    "layer_norm_chw_split": '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm((8, 64, 64))
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(2, 8, 64, 64)]


def get_init_inputs():
    return []
''',
}
ROWS = {"batch_norm3d_eval_bf16": (1440, 4, "x1 = (xrow % 5)"), "layer_norm_chw_split": (32768, 2, "x1 = xrow")}


def captured(kernelopt_bin, tmp_path, name):
    problem = tmp_path / f"{name}.py"
    problem.write_text(PROBLEMS[name])
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([kernelopt_bin, "capture", str(problem), "--out", str(tmp_path / "b"), "--device", "cpu",
                        "--cpu-kernels", "triton", "-q"], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr
    return tmp_path / "b"


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_row_tiles_compute_per_row_values_once_and_pass_the_gates(kernelopt_bin, tmp_path, name):
    bundle = captured(kernelopt_bin, tmp_path, name)
    manifest = candidate_manifest(kernelopt_bin, bundle, tmp_path / "c", device="cpu")
    row, loads, digit = ROWS[name]
    tiles = [(k["kernel"], c) for k in manifest["kernels"] for c in k["candidates"]
             if c["description"].startswith(f"row tiles: programs walk tiles of one row of {row} ({loads} per-row")]
    assert len(tiles) == 2, [c["description"] for k in manifest["kernels"] for c in k["candidates"]]
    kernel, cand = tiles[0]
    source = (tmp_path / "c" / cand["file"]).read_text()
    assert digit in source and ", None, eviction_policy='evict_last')" in source
    gates = verify_gates(kernelopt_bin, bundle, kernel, tmp_path / "c" / cand["file"], tmp_path / "r.db", seeds=3,
                         device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
    assert all(r["match"] and r["max_rel"] == 0.0 for r in gates["G2"]["evidence"]["runs"])
    # The row digit taken from the tile's neighbour: every row normalized by another row's statistics.
    wrong = tmp_path / "wrong.py"
    wrong.write_text(source.replace(digit, digit.replace("xrow", "(xrow + 1)")))
    bad = verify_gates(kernelopt_bin, bundle, kernel, wrong, tmp_path / "w.db", device="cpu")
    assert bad["G2"]["status"] == "failed", bad["G2"]
