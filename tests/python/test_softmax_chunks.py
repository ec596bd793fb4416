"""The softmax-chunks rewrite (engine/src/agents/coder/rewrites/softmax_chunks.h) in CPU mode: Inductor's
per-element online softmax update (two exps an element) becomes one running max a row raised once a chunk and
the lanes' sums rescaled once a chunk (one exp an element). A softmax over rows of 50K and a softmax over the
columns of a row-major tensor (loads across memory), both captured on the GPU, pass G1-G3 on every seed kind;
the same rewrite without the sums' rescale fails G2 (for the bf16 softmax over 50K values, each near 2e-5, only by
G2's rule that an elementwise match on ordinary inputs holds within rtol of the output's scale: its error sits
inside the absolute tolerance of 0.01). No speed is claimed here (benchmarks/RESULTS.md)."""
from pathlib import Path

import pytest
from conftest import candidate_manifest, verify_gates

DATA = Path(__file__).parent / "data"


def chunks_candidate(kernelopt_bin, bundle, out):
    manifest = candidate_manifest(kernelopt_bin, bundle, out, device="cpu")
    found = [(k["kernel"], c) for k in manifest["kernels"] for c in k["candidates"]
             if c["description"].startswith("softmax chunks: 1 per-element online softmax update")]
    assert len(found) == 1, [c["description"] for k in manifest["kernels"] for c in k["candidates"]]
    return found[0][0], out / found[0][1]["file"]


@pytest.mark.parametrize("bundle", [DATA / "softmax_rows_50k_small", DATA / "softmax_columns_inductor_form"],
                         ids=lambda p: p.name)
def test_softmax_chunks_pass_the_gates(kernelopt_bin, tmp_path, bundle):
    kernel, cand = chunks_candidate(kernelopt_bin, bundle, tmp_path / "c")
    source = cand.read_text()
    # One exp an element in the loop, the max one value a row, Inductor's reduce after the loop kept.
    assert "online_softmax_combine(" not in source and source.count("online_softmax_reduce(") == 1
    acc = source.split("_bm = triton_helpers.maximum(")[0].rsplit("\n", 1)[1].strip()
    assert f"{acc}_max = tl.full([XBLOCK, 1], float('-inf'), tl.float32)" in source
    gates = verify_gates(kernelopt_bin, bundle, kernel, cand, tmp_path / "r.db", seeds=5, device="cpu")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
    # The lanes' sums left at their old max when a chunk raises it: they then count earlier elements too much.
    rescale = f"{acc}_sum * tl.math.exp2(({acc}_max - {acc}_bm) * 1.4426950408889634)"
    assert rescale in source
    wrong = tmp_path / "wrong.py"
    wrong.write_text(source.replace(rescale, f"{acc}_sum"))
    bad = verify_gates(kernelopt_bin, bundle, kernel, wrong, tmp_path / "w.db", seeds=2, device="cpu")
    assert bad["G2"]["status"] == "failed", bad["G2"]
