"""The coder's source rewrites (engine/src/agents/coder/rewrites.cpp) through the gates:
kopt_rewrite writes the rewrites of a corpus kernel, and `kernelopt verify` must pass each
through G1-G3 in CPU mode (the Triton interpreter).

The captured softmax_large bundle (8192 x 8192) is too large for the interpreter, so the test
verifies a copy with every 8192 (rows, columns, strides, numels, size hints) replaced by 64:
the same two-pass looped softmax kernel, its launch and model, at a size the interpreter runs
in seconds."""
import json
import os
import shutil
import subprocess

import pytest
from conftest import CORPUS, ROOT

DEVICE = os.environ.get("KERNELOPT_TEST_DEVICE", "cpu")
SOFTMAX = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0"


def rewrite_tool(kernelopt_bin) -> str:
    """$KOPT_REWRITE, else kopt_rewrite beside the kernelopt binary, else build/engine/kopt_rewrite."""
    for cand in (os.environ.get("KOPT_REWRITE"), os.path.join(os.path.dirname(kernelopt_bin), "kopt_rewrite"),
                 str(ROOT / "build/engine/kopt_rewrite")):
        if cand and os.path.exists(cand):
            return cand
    pytest.fail("kopt_rewrite not found: run ./setup.sh (it builds build/engine/), or set KOPT_REWRITE")


def small_softmax(tmp_path):
    bundle = tmp_path / "softmax_small"
    shutil.copytree(CORPUS / "softmax_large", bundle)
    for f in ("module_0.py", "problem.py", "meta.json"):
        p = bundle / f
        p.write_text(p.read_text().replace("8192", "64"))
    return bundle


def test_rewritten_softmax_passes_the_gates(kernelopt_bin, tmp_path):
    bundle = small_softmax(tmp_path)
    out = tmp_path / "rewrites"
    out.mkdir()
    r = subprocess.run([rewrite_tool(kernelopt_bin), str(bundle), SOFTMAX, str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    cands = json.loads(r.stdout)
    # Inductor already hints evict_last/evict_first on the two passes: the hint-free variant remains.
    assert [c["description"] for c in cands] == ["eviction hints removed"]
    original = (bundle / "module_0.py").read_text()
    for c in cands:
        src = open(c["file"]).read()
        assert "eviction_policy" not in src and src.count("tl.load(") == 2
        assert "eviction_policy='evict_first'" in original
        env = dict(os.environ, KERNELOPT_DB=str(tmp_path / "r.db"), PYTHONPATH=str(ROOT / "python"))
        v = subprocess.run([kernelopt_bin, "verify", str(bundle), "--kernel", SOFTMAX, "--candidate", c["file"],
                            "--device", DEVICE, "--json", "-q", "--seeds", "3"],
                           capture_output=True, text=True, timeout=300, env=env)
        assert v.returncode == 0, v.stderr + v.stdout[-2000:]
        gates = {g["gate"]: g["status"] for g in json.loads(v.stdout)["gates"]}
        assert gates["G1"] == gates["G2"] == gates["G3"] == "passed", gates


def test_a_kernel_without_a_rewrite_is_declined_with_reasons(kernelopt_bin, tmp_path):
    r = subprocess.run([rewrite_tool(kernelopt_bin), str(CORPUS / "gelu_scale"), "triton_poi_fused_add_gelu_mul_0",
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "does not widen its indices" in r.stderr and "not a looped reduction" in r.stderr, r.stderr
    assert not list(tmp_path.glob("rewrite_*.py"))
