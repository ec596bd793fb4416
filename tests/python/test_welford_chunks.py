"""The Welford-chunks rewrite (engine/src/agents/coder/rewrites/welford_chunks.h) on corpus kernels captured on the
GPU, in CPU mode: Inductor's per-element Welford update (a division per element) becomes per-chunk statistics
merged once a chunk by `triton_helpers.welford_combine`; the statistics kernels of a group norm and a layer norm
over three trailing dims pass G1-G3 on every seed kind; so does the split form (a row's statistics over several
programs, each element folded in by a masked `welford_combine`, captured on the CPU with Triton kernels from a layer
norm over 7 x 97 x 131 bf16 values a row, the shape class of a fresh draw's 1.75x-its-floor statistics kernel). The
same rewrite with each chunk's deviations taken from the running mean instead of the chunk's own fails G2. No speed
is claimed here (benchmarks/RESULTS.md)."""
from pathlib import Path

import pytest
from conftest import CORPUS, candidate_manifest, verify_gates

DATA = Path(__file__).parent / "data"


def welford_candidate(kernelopt_bin, bundle, out):
    manifest = candidate_manifest(kernelopt_bin, bundle, out, device="cpu")
    found = [(k["kernel"], c) for k in manifest["kernels"] for c in k["candidates"]
             if c["description"].startswith("welford chunks: 1 per-element Welford update")]
    assert len(found) == 1, [c["description"] for k in manifest["kernels"] for c in k["candidates"]]
    return found[0][0], out / found[0][1]["file"]


@pytest.mark.parametrize("bundle", [CORPUS / "group_norm", CORPUS / "layer_norm_3d",
                                    DATA / "layer_norm3_split_cpu_capture"], ids=lambda p: p.name)
def test_welford_chunks_pass_the_gates(kernelopt_bin, tmp_path, bundle):
    split = "welford_combine(" in (bundle / "module_0.py").read_text()
    kernel, cand = welford_candidate(kernelopt_bin, bundle, tmp_path / "c")
    source = cand.read_text()
    assert "welford_reduce(" not in source and source.count("triton_helpers.welford_combine(") == 1
    # The split form's per-element combine is gone too: one merge a chunk, its weights from the masked triples.
    assert ("_cm2 = tl.sum(" in source) == split
    gates = verify_gates(kernelopt_bin, bundle, kernel, cand, tmp_path / "r.db", seeds=5, device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
    # Deviations from the running mean instead of the chunk's own: the merge then counts them twice.
    acc = source.split("_cmean = tl.sum(")[0].rsplit("\n", 1)[1].strip().split("_n = ")[0]
    wrong = tmp_path / "wrong.py"
    bad_source = source.replace(f" - {acc}_cmean, 0.0)", f" - {acc}_mean, 0.0)")
    assert bad_source != source
    wrong.write_text(bad_source)
    bad = verify_gates(kernelopt_bin, bundle, kernel, wrong, tmp_path / "w.db", seeds=2, device="cpu")
    assert bad["G2"]["status"] == "failed", bad["G2"]
