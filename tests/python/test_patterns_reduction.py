"""The axis-reduction generator (pattern:axis_reduction, engine/src/agents/coder/patterns/axis_reduction.cpp)
through the gates: `kernelopt candidates` writes what the built-in coder proposes for a captured bundle, and
every candidate of the generator must pass G1-G3 in CPU mode (the Triton interpreter). G2 also runs each
under its small config (XBLOCK shrunk: more programs than the tiles, the ones past them masked out; the row
loop's R0_BLOCK shrunk: several passes), so the tile mapping is checked beyond one program.

Bundles (corpus/): sums, means, max and argmin over outer, middle and 4-D middle axes with odd and prime
extents, Inductor's split column mean (two kernels) and a log-softmax over a middle axis (its output
written per element of the reduced axis). Reductions along the contiguous axis are declined
with the reason."""
import json
import os
import subprocess

import pytest
from conftest import CORPUS, ROOT, verify_gates

DEVICE = os.environ.get("KERNELOPT_TEST_DEVICE", "cpu")
ORIGIN = "pattern:axis_reduction"


def proposed(kernelopt_bin, bundle, tmp_path):
    """What the built-in coder proposes for `bundle` (a corpus name or a path): (its directory, its kernels)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "candidates"
    env = dict(os.environ, KERNELOPT_DB=str(tmp_path / "c.db"), PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([kernelopt_bin, "candidates", str(CORPUS / bundle), "--out", str(out), "--device", DEVICE,
                        "--quiet"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "manifest.json").read_text())["kernels"]


def verify(kernelopt_bin, bundle, kernel, candidate, tmp_path):
    gates = verify_gates(kernelopt_bin, bundle, kernel, candidate, tmp_path / "r.db", seeds=3, timeout=300)
    status = {g: gates[g]["status"] for g in gates}
    assert status["G1"] == status["G2"] == status["G3"] == "passed", (candidate, status)


@pytest.mark.parametrize("name,kernels", [
    ("sum_middle_odd", 1),   # sum over dim 1 of 8x37x61
    ("amax_outer", 1),       # amax over dim 0 of 19x24x33
    ("mean_dim2_4d", 1),     # mean over dim 2 of 3x5x47x7
    ("argmin_middle", 1),    # argmin over dim 1 of 6x41x35
    ("mean_dim0", 2),        # mean over dim 0 of 256x256: Inductor's split, both kernels
    ("log_softmax_middle", 1),  # log_softmax over dim 1: a pointwise epilogue over the reduced axis
])
def test_every_axis_reduction_candidate_passes_the_gates(kernelopt_bin, tmp_path, name, kernels):
    out, manifest = proposed(kernelopt_bin, name, tmp_path)
    cands = [(k["kernel"], c) for k in manifest for c in k["candidates"] if c["origin"] == ORIGIN]
    assert len({k for k, _ in cands}) == kernels, [(k["kernel"], k["declined"]) for k in manifest]
    # The first, a middle and the last instance of each kernel: the instances differ in their tile
    # (inner block x outer rows, looped or not) and warps; these span the range (the whole list took
    # half an hour in the interpreter on a two-core machine).
    for k in {k for k, _ in cands}:
        mine = [c for kk, c in cands if kk == k]
        for c in {id(c): c for c in (mine[0], mine[len(mine) // 2], mine[-1])}.values():
            verify(kernelopt_bin, CORPUS / name, k, out / c["file"], tmp_path)


@pytest.mark.parametrize("name", ["row_sum_long", "argmax_dim", "min_dim"])
def test_reductions_along_the_contiguous_axis_are_declined(kernelopt_bin, tmp_path, name):
    _, manifest = proposed(kernelopt_bin, name, tmp_path)
    for k in manifest:
        assert not any(c["origin"] == ORIGIN for c in k["candidates"]), k["kernel"]
        reasons = [d for d in k["declined"] if d.startswith(ORIGIN + ":")]
        assert reasons and "a reduction along the contiguous axis" in reasons[0], k["declined"]


def test_looped_argmin_with_ties_and_its_unmasked_form(kernelopt_bin, tmp_path):
    """Inductor's looped argmin over dim 0 (512x64, many ties: the first index of the minimum must win,
    through the kernel's own minimum_with_index running update), and the same kernel as Inductor writes it
    when the columns divide every XBLOCK (no x mask: programs past the tiles redo one instead of being
    masked; G2's small config launches them). Each instance of the tiles' first and last shapes passes G1-G3."""
    from test_templates_scan import DATA, unmasked_columns
    kernel = "triton_red_fused_argmin_0"
    plain = DATA / "argmin_dim0_inductor_form"
    for bundle in (plain, unmasked_columns(plain, tmp_path / "unmasked")):
        out, manifest = proposed(kernelopt_bin, bundle, tmp_path / bundle.name)
        cands = [c for k in manifest for c in k["candidates"] if c["origin"] == ORIGIN]
        assert cands, [k["declined"] for k in manifest]
        unmasked = bundle != plain
        for c in (cands[0], cands[-1]):
            src = (out / c["file"]).read_text()
            assert ("kopt_pid = tl.program_id(0) % " in src) == unmasked, c["description"]
            verify(kernelopt_bin, bundle, kernel, out / c["file"], tmp_path)


def test_a_two_loop_softmax_over_an_outer_axis(kernelopt_bin, tmp_path):
    """Inductor's one-kernel online softmax over columns (`x0 + 64*r0_1`: a statistics loop, then the loop that
    writes the column): both loops reoriented line for line, the online-softmax reduce taken over axis 0, and
    the first instance passes G1-G3."""
    from test_templates_scan import DATA
    bundle = DATA / "softmax_columns_inductor_form"
    out, manifest = proposed(kernelopt_bin, bundle, tmp_path)
    cands = [(k["kernel"], c) for k in manifest for c in k["candidates"] if c["origin"] == ORIGIN]
    assert cands, [k["declined"] for k in manifest]
    kernel, first = cands[0]
    src = (out / first["file"]).read_text()
    assert "triton_helpers.online_softmax_reduce(_tmp3_max, _tmp3_sum, 0, False)" in src
    assert src.count("for r0_offset in tl.range(0, r0_numel, R0_BLOCK") == 2
    verify(kernelopt_bin, bundle, kernel, out / first["file"], tmp_path)
