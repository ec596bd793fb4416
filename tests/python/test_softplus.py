"""The softplus rewrite (engine/src/agents/coder/rewrites/softplus.h) in CPU mode: `log1p(exp(a))` as
`log2(1 + exp2(a log2 e)) ln 2`. A binary cross entropy with logits over 37 x 9001 float32 values, captured on the
CPU with Triton kernels (its looped reduction computes log1p(exp(-|x|)) per element), passes G1-G3 on every seed
kind; the same rewrite without the factor ln 2 fails G2. No speed is claimed here (benchmarks/RESULTS.md)."""
from pathlib import Path

from conftest import candidate_manifest, verify_gates

BUNDLE = Path(__file__).parent / "data" / "bce_with_logits_cpu_capture"


def test_softplus_passes_the_gates_and_a_wrong_scale_fails(kernelopt_bin, tmp_path):
    manifest = candidate_manifest(kernelopt_bin, BUNDLE, tmp_path / "c", device="cpu")
    found = [(k["kernel"], c) for k in manifest["kernels"] for c in k["candidates"]
             if c["description"].startswith("softplus: 1 log1p(exp(x))")]
    assert len(found) == 1, [c["description"] for k in manifest["kernels"] for c in k["candidates"]]
    kernel, cand = found[0][0], tmp_path / "c" / found[0][1]["file"]
    source = cand.read_text()
    assert "libdevice.log1p(" not in source and "libdevice.exp(" not in source
    assert source.count("tl.math.exp2(") == 1 and source.count("tl.math.log2(1.0 + ") == 1
    gates = verify_gates(kernelopt_bin, BUNDLE, kernel, cand, tmp_path / "r.db", seeds=5, device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
    # log2 taken for the natural log: every loss term off by a factor 1.44.
    wrong = tmp_path / "wrong.py"
    bad_source = source.replace(" * 0.6931471805599453", "")
    assert bad_source != source
    wrong.write_text(bad_source)
    bad = verify_gates(kernelopt_bin, BUNDLE, kernel, wrong, tmp_path / "w.db", seeds=2, device="cpu")
    assert bad["G2"]["status"] == "failed", bad["G2"]
