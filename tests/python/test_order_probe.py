"""G2's order probe (engine/src/verify/order_probe.h, docs/gates.md): a long product's NaN/Inf positions on the
`special` seed depend on how its elements are grouped, so a launch config of a looped cumprod — the original's own
code, other chunks — differs from the original there and nowhere else; a long sum regrouped differs by more than a
tight tolerance allows. G2 lets such a run through only where the original's own source under another config
differs as much too, and then only on G3's float64 rule. A candidate whose NaN/Inf positions differ on a kernel
that keeps them under every blocking (a pointwise affine map made to overflow) and a candidate with a finite error
must still fail. Bundles captured here (`kernelopt capture --device cpu --cpu-kernels triton`) and
tests/python/data/cumsum_split_scan_small."""
import json
import os
import subprocess

import pytest
from conftest import ROOT, candidate_manifest, verify_gates

PROBLEMS = {
    "cumprod_long": ("torch.cumprod(a, dim=1)", "1.0 + 0.01 * torch.randn(16, 8192)"),
    "affine": ("a * 2.0 + 1.0", "torch.randn(16, 8192)"),
}


def captured(kernelopt_bin, tmp_path, name):
    body, inputs = PROBLEMS[name]
    problem = tmp_path / f"{name}.py"
    problem.write_text(f"""import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return {body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
""")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([kernelopt_bin, "capture", str(problem), "--out", str(tmp_path / name), "--device", "cpu",
                        "--cpu-kernels", "triton", "-q"], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr
    return tmp_path / name


def config_candidate(kernelopt_bin, bundle, out, r0_block=None):
    manifest = candidate_manifest(kernelopt_bin, bundle, out, device="cpu")
    (k,) = manifest["kernels"]
    for c in k["candidates"]:
        if c["origin"] == "config" and (r0_block is None or c["config"].get("R0_BLOCK") == r0_block):
            return k["kernel"], out / c["file"]
    raise AssertionError([c["description"] for c in k["candidates"]])


def test_a_cumprod_regrouped_passes_where_the_original_regrouped_differs_too(kernelopt_bin, tmp_path):
    bundle = captured(kernelopt_bin, tmp_path, "cumprod_long")
    kernel, cand = config_candidate(kernelopt_bin, bundle, tmp_path / "c", r0_block=256)
    gates = verify_gates(kernelopt_bin, bundle, kernel, cand, tmp_path / "r.db", seeds=3, device="cpu")
    g2 = gates["G2"]
    assert g2["status"] == "passed" and g2["evidence"]["needs_fp64"], g2
    probed = [r for r in g2["evidence"]["runs"] if "order_sensitive" in r]
    # Only the special values overflow, and only their grouping differs: every other run matches.
    assert [r["inputs"] for r in probed] == ["seed 2 (special)"], g2["evidence"]["runs"]
    assert all(r["match"] for r in g2["evidence"]["runs"] if "order_sensitive" not in r)
    assert "R0_BLOCK" in probed[0]["order_sensitive"]["original_config"]
    assert gates["G3"]["status"] == "passed" and "float64 rule" in gates["G3"]["evidence"]["rule"], gates["G3"]
    # The same regrouping with a finite error of 1%: no probe excuses it.
    wrong = tmp_path / "wrong.py"
    source = cand.read_text()
    store = "tl.store(out_ptr0 + ("
    assert source.count(store) == 1
    head, tail = source.split(store)
    index, rest = tail.split("), ", 1)
    value, rest = rest.split(", ", 1)
    wrong.write_text(f"{head}{store}{index}), {value} * 1.01, {rest}")
    bad = verify_gates(kernelopt_bin, bundle, kernel, wrong, tmp_path / "w.db", seeds=3, device="cpu")
    assert bad["G2"]["status"] == "failed", bad["G2"]


def test_nonfinite_positions_differing_where_the_original_keeps_them_fail(kernelopt_bin, tmp_path):
    bundle = captured(kernelopt_bin, tmp_path, "affine")
    kernel, cand = config_candidate(kernelopt_bin, bundle, tmp_path / "c")
    source = cand.read_text()
    assert "tl.store(out_ptr0 + (x0), tmp4, None)" in source, source
    # Exact for ordinary values (a power-of-ten scale and back), inf for the special seed's huge ones.
    wrong = tmp_path / "overflow.py"
    wrong.write_text(source.replace("tl.store(out_ptr0 + (x0), tmp4, None)",
                                    "tl.store(out_ptr0 + (x0), (tmp4 * 1e30) / 1e30, None)"))
    gates = verify_gates(kernelopt_bin, bundle, kernel, wrong, tmp_path / "r.db", seeds=3, device="cpu")
    g2 = gates["G2"]
    assert g2["status"] == "failed", g2
    (bad,) = g2["evidence"]["mismatched_args"]
    assert bad["finite_ok"] and not bad["inf_positions_match"], bad
    assert not any("order_sensitive" in r for r in g2["evidence"]["runs"])


def verify_tight(kernelopt_bin, bundle, kernel, candidate, db):
    """`kernelopt verify --json` with a float32 tolerance far below a long sum's own regrouping (rtol 1e-8, no
    atol): the gates by name."""
    env = dict(os.environ, KERNELOPT_DB=str(db), PYTHONPATH=str(ROOT / "python"))
    v = subprocess.run([kernelopt_bin, "verify", str(bundle), "--kernel", kernel, "--candidate", str(candidate),
                        "--device", "cpu", "--json", "-q", "--seeds", "1", "--rtol-fp32", "1e-8", "--atol-fp32", "0"],
                       capture_output=True, text=True, timeout=900, env=env)
    assert v.stdout.strip(), v.stderr
    return {g["gate"]: g for g in json.loads(v.stdout)["gates"]}


def test_a_regrouped_long_sum_differing_as_the_original_does_passes_on_the_float64_rule(kernelopt_bin, tmp_path):
    """A split scan over rows of 64K fp32 (tests/python/data) at another segment size differs from the original by
    5e-7 of the output's scale: far beyond rtol 1e-8, and beyond rounding level. The original's own source at
    the smallest segment differs from it by as much (8e-7), so the difference is the grouping's: G2 passes on
    G3's float64 rule, which finds the candidate as accurate. The same candidate off by 1e-5 is not covered."""
    bundle = ROOT / "tests" / "python" / "data" / "cumsum_split_scan_small"
    kernel, cand = config_candidate(kernelopt_bin, bundle, tmp_path / "c", r0_block=512)
    gates = verify_tight(kernelopt_bin, bundle, kernel, cand, tmp_path / "r.db")
    g2 = gates["G2"]
    assert g2["status"] == "passed" and g2["evidence"]["needs_fp64"], g2
    runs = g2["evidence"]["runs"]
    assert runs and all("order_sensitive" in r and not r["match"] for r in runs), runs
    assert all(r["order_sensitive"]["original_max_rel"] * 2 >= r["max_rel"] for r in runs)
    assert gates["G3"]["status"] == "passed" and "float64 rule" in gates["G3"]["evidence"]["rule"], gates["G3"]
    source = cand.read_text()
    store = "tl.store(out_ptr0 + ("
    assert source.count(store) == 1, source
    head, tail = source.split(store)
    index, rest = tail.split("), ", 1)
    value, rest = rest.split(", ", 1)
    wrong = tmp_path / "off.py"
    wrong.write_text(f"{head}{store}{index}), {value} * 1.00001, {rest}")
    bad = verify_tight(kernelopt_bin, bundle, kernel, wrong, tmp_path / "w.db")
    assert bad["G2"]["status"] == "failed", bad["G2"]
