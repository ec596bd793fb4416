"""pattern:window (engine/src/agents/coder/patterns/window.h) through the gates in CPU mode: for each
captured pool of the corpus (1-D dilated max and padded average, a ceil_mode rectangular 2-D max, a
dilated 3-D max, 2-D max and average), `kernelopt candidates` lists the generator's instances and
`kernelopt verify` passes every one of them through G1-G3 in the Triton interpreter (G2's small
launch config runs several programs of each, and the window values are combined by Inductor's own
statements, so outputs are bit-equal). Kernels that are no windowed load are declined with the
reason. No speed is claimed here: the H200 times them."""
import re

import pytest
from conftest import CORPUS, candidate_manifest, verify_gates


@pytest.mark.parametrize("name", ["max_pool1d_dilated", "avg_pool1d_padded", "max_pool2d_rect_ceil",
                                  "max_pool3d_dilated", "max_pool2d", "avg_pool2d"])
def test_every_window_instance_passes_the_gates_bit_equal(kernelopt_bin, tmp_path, name):
    manifest = candidate_manifest(kernelopt_bin, CORPUS / name, tmp_path / "cands")
    (kernel,) = manifest["kernels"]
    window = [c for c in kernel["candidates"] if c["description"].startswith("window:")]
    assert 2 <= len(window) <= 8, kernel.get("declined")
    # One instance per code shape (outputs per lane, output rows walked): the others differ only in
    # their warps and lanes per program, the same source at another launch config (kept CI affordable:
    # every instance of a 2-D pool took 20 minutes in the interpreter).
    shapes = {}
    for c in window:
        shape = re.sub(r"\d+ lanes x \d+ tile rows per program, |, num_warps=\d+", "", c["description"])
        shapes.setdefault(shape, c)
    assert len(shapes) >= 2, [c["description"] for c in window]
    window = list(shapes.values())
    if name in ("max_pool2d", "avg_pool2d"):
        # The corpus's 32x32 pools take minutes per run in the interpreter: the first and last code shape
        # (4 outputs a lane with 4 rows walked, 8 with 8); max_pool2d_rect_ceil runs every shape of the 2-D walk.
        window = [window[0], window[-1]]
    for c in window:
        gates = verify_gates(kernelopt_bin, CORPUS / name, kernel["kernel"], tmp_path / "cands" / c["file"],
                             tmp_path / "r.db", timeout=600)
        assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, (c["description"], gates)
        assert all(r["match"] and r["max_rel"] == 0.0 for r in gates["G2"]["evidence"]["runs"]), c["description"]


@pytest.mark.parametrize("name", ["max_pool2d_k5_s13", "max_pool3d_k3_s2"])
def test_a_big_window_inductor_wrote_as_a_reduction_passes_the_gates_bit_equal(kernelopt_bin, tmp_path, name):
    # 25- and 27-element max pools: Inductor's persistent reduction over the window, unrolled per r into
    # the pointwise form (window_unroll.cpp). One code shape (4 outputs a lane), at two launch configs.
    manifest = candidate_manifest(kernelopt_bin, CORPUS / name, tmp_path / "cands")
    (kernel,) = manifest["kernels"]
    window = [c for c in kernel["candidates"] if c["description"].startswith("window:")]
    assert len(window) == 2 and all("4 outputs per lane" in c["description"] for c in window), kernel.get("declined")
    gates = verify_gates(kernelopt_bin, CORPUS / name, kernel["kernel"], tmp_path / "cands" / window[0]["file"],
                         tmp_path / "r.db")
    assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, gates
    assert all(r["match"] and r["max_rel"] == 0.0 for r in gates["G2"]["evidence"]["runs"])


@pytest.mark.parametrize("name, op", [("max_pool2d_rect_ceil", "max"), ("max_pool3d_dilated", "max"),
                                      ("max_pool2d_k5_s13", "max"), ("max_pool3d_k3_s2", "max"),
                                      ("avg_pool2d", "sum")])
def test_the_separable_form_passes_the_gates(kernelopt_bin, tmp_path, name, op):
    # Each row's taps combined once, the rows of each output from a ring of row values carried through a
    # loop (window_separable.h): a ceil_mode rectangle, a dilated 3-D pool, big windows Inductor wrote as
    # reductions (2-D and 3-D) and an average pool. Max is exact in any order (bit-equal); the average's
    # sum is reassociated, within G2's tolerance like any reordered reduction.
    manifest = candidate_manifest(kernelopt_bin, CORPUS / name, tmp_path / "cands")
    (kernel,) = manifest["kernels"]
    separable = [c for c in kernel["candidates"] if c["description"].startswith("window separable:")]
    assert separable and all(f"{op} of " in c["description"] for c in separable), kernel.get("declined")
    first = next(c for c in kernel["candidates"] if c["origin"] == "pattern:window")
    assert first["description"] == separable[0]["description"]  # the generator's first proposal
    # Both lane layouts: interleaved (first: a tap's loads coalesced across lanes) and column tiles.
    interleaved = [c for c in separable if "interleaved" in c["description"] or " apart," in c["description"]]
    tiles = [c for c in separable if c not in interleaved]
    assert interleaved and tiles and separable[0] is interleaved[0], [c["description"] for c in separable]
    for cand in (interleaved[0], tiles[0]):
        gates = verify_gates(kernelopt_bin, CORPUS / name, kernel["kernel"], tmp_path / "cands" / cand["file"],
                             tmp_path / "r.db")
        assert [gates[g]["status"] for g in ("G1", "G2", "G3")] == ["passed"] * 3, (cand["description"], gates)
        runs = gates["G2"]["evidence"]["runs"]
        assert all(r["match"] for r in runs)
        assert all(r["max_rel"] == 0.0 for r in runs) if op == "max" else max(r["max_rel"] for r in runs) < 1e-5
    if name == "max_pool2d_k5_s13":
        # The ring's shift is what makes it right: a carried row value taken from the wrong position
        # (one row further on) fails G2.
        src = (tmp_path / "cands" / separable[0]["file"]).read_text()
        assert "        h0_1 = h0_2\n" in src
        bad = tmp_path / "bad.py"
        bad.write_text(src.replace("        h0_1 = h0_2\n", "        h0_1 = h0_3\n"))
        gates = verify_gates(kernelopt_bin, CORPUS / name, kernel["kernel"], bad, tmp_path / "r.db")
        assert gates["G1"]["status"] == "passed" and gates["G2"]["status"] == "failed", gates


@pytest.mark.parametrize("name, reason", [
    ("gelu_scale", "not one windowed input"),
    ("softmax_lastdim", "a reduction that is not a window's elements combined"),
    ("avg_pool2d_channels_last", "merged over two output dimensions"),
])
def test_other_kernels_are_declined_with_the_reason(kernelopt_bin, tmp_path, name, reason):
    manifest = candidate_manifest(kernelopt_bin, CORPUS / name, tmp_path / "cands")
    for kernel in manifest["kernels"]:
        assert not [c for c in kernel["candidates"] if c["origin"] == "pattern:window"], kernel["kernel"]
    declined = [d for k in manifest["kernels"] for d in k.get("declined", []) if d.startswith("pattern:window: ")]
    assert any(reason in d for d in declined), declined
