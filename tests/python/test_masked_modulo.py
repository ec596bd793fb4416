"""The masked-modulo rewrite (engine/src/agents/coder/rewrites/masked_modulo.h) on a split reduction captured on
this machine as Inductor writes it (`kernelopt capture --device cpu --cpu-kernels triton`): a summed smooth L1 loss
over a transposed pair of 1001 x 517 whose 517517 elements Inductor splits into chunks of 64690 (the last one
overshooting), reading `((r0_1 + 64690*x0) % 517517)` under the mask `tmp2 = tmp0 < 517517`. Without the modulo
the unmasked lanes read what they read before, so G1-G3 pass. No speed is claimed here."""
import os
import subprocess

from conftest import ROOT, candidate_manifest, verify_gates

PROBLEM = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a, b):
        return F.smooth_l1_loss(a, b, reduction="sum")


def get_inputs():
    return [torch.randn(1001, 517).t(), torch.randn(1001, 517).t()]


def get_init_inputs():
    return []
'''


def test_the_modulo_a_split_reductions_mask_bounds_is_dropped_and_the_gates_pass(kernelopt_bin, tmp_path):
    (tmp_path / "p.py").write_text(PROBLEM)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([kernelopt_bin, "capture", str(tmp_path / "p.py"), "--out", str(tmp_path / "b"), "--device",
                        "cpu", "--cpu-kernels", "triton", "-q"], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr
    assert "% 517517)), r0_mask & tmp2 & xmask" in (tmp_path / "b" / "module_0.py").read_text()
    manifest = candidate_manifest(kernelopt_bin, tmp_path / "b", tmp_path / "c", device="cpu")
    found = [(k["kernel"], c) for k in manifest["kernels"] for c in k["candidates"]
             if c["description"] == "masked modulo: 2 load index modulo(s) its mask bounds dropped"]
    assert len(found) == 1, [c["description"] for k in manifest["kernels"] for c in k["candidates"]]
    kernel, cand = found[0]
    source = (tmp_path / "c" / cand["file"]).read_text()
    assert "% 517517" not in source and "tl.load(in_ptr0 + (((r0_1 + 64690*x0))), r0_mask & tmp2 & xmask" in source
    gates = verify_gates(kernelopt_bin, tmp_path / "b", kernel, tmp_path / "c" / cand["file"], tmp_path / "r.db",
                         seeds=3, device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
