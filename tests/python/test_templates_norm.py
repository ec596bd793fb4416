"""The row-norm template in CPU mode on captured norm bundles: `kernelopt optimize`
proposes it first, its instance passes G1-G3 through the Triton interpreter (every
output compared with the original kernel over several seeds, then the model), the
stitched module holds it, and that module matches the eager model. (The layer_norm
bundle is covered by test_optimize.py's first test.)
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def optimize(kernelopt_bin, target, out, db, *extra):
    cmd = [kernelopt_bin, "optimize", str(target), "--device", "cpu", "--out", str(out), "--db", str(db), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def result_vs_eager(out: Path) -> dict:
    """The result directory's modules run as a bundle against the eager model (in-process, CPU mode)."""
    from unittest import mock

    from kernelopt.worker.ops import bundle_ops

    with mock.patch.dict(os.environ, {"KERNELOPT_DEVICE": "cpu"}):
        return bundle_ops.run_baseline({"bundle": str(out)})


@pytest.mark.parametrize("bundle, family, eps", [
    ("rms_norm", "rms_norm", "1e-06"),
    ("layer_norm_bf16", "layer_norm", "1e-05"),
])
def test_row_norm_template_is_verified_and_used(kernelopt_bin, tmp_path, bundle, family, eps):
    out = tmp_path / "out"
    r = optimize(kernelopt_bin, CORPUS / bundle, out, tmp_path / "results.db", "--max-cascades", "1")
    assert r.returncode == 0, r.stderr
    (kernel,) = json.loads((out / "report.json").read_text())["kernels"]
    assert kernel["family"] == family and kernel["accepted"], kernel.get("note")
    chosen = next(c for c in kernel["candidates"] if c["id"] == kernel["chosen"])
    assert chosen["origin"] == f"template:{family}"
    assert [g["status"] for g in chosen["gates"][:3]] == ["passed"] * 3
    module = (out / "module_0.py").read_text()
    assert "kernelopt template row_norm" in module
    # eps is carried over from the original kernel, not assumed from the family.
    assert f"tl.full([1, 1], {eps}, tl.float32)" in module
    assert result_vs_eager(out)["match"]


def test_group_norm_statistics_kernel_uses_the_template(kernelopt_bin, tmp_path):
    """Group norm's statistics kernel (per-group Welford mean and M2, two per-row outputs G2 compares) takes
    the template; its pointwise normalize kernel is not a row kernel: configs and the row-tiles rewrite only."""
    out = tmp_path / "out"
    r = optimize(kernelopt_bin, CORPUS / "group_norm", out, tmp_path / "results.db", "--max-cascades", "1")
    assert r.returncode == 0, r.stderr
    kernels = {k["name"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    stats = kernels["triton_red_fused_native_group_norm_0"]
    accepted = [c for c in stats["candidates"] if c["outcome"] == "accepted"]
    assert [c["origin"] for c in accepted] == ["template:group_norm"], stats["candidates"]
    # In CPU mode the region's row merge (statistics and normalize in one kernel) then replaces both kernels'
    # own winners: it is chosen for its floor (test_region_fusion.py).
    assert stats["fused"] and stats["chosen"] is None
    pointwise = kernels["triton_poi_fused_native_group_norm_1"]
    assert all(c["origin"] == "config" or c["description"].startswith("row tiles: ")
               for c in pointwise["candidates"]), pointwise["candidates"]
    assert result_vs_eager(out)["match"]
