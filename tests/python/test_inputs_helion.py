"""Helion kernel files (docs/inputs.md): the captured bundles in corpus/helion/ are ordinary
bundles the engine parses; with helion importable, capture on the CPU (Helion's generated code in
Triton's interpreter) and the worker's checks against the Helion kernel's own output.

The engine-side test needs no helion. The rest needs helion (requirements-ci.txt pins it) because the
reference is the Helion kernel itself: without helion those skip, and say so."""

import importlib.util
import json
import os
import subprocess

import pytest
import torch
from conftest import CORPUS, ROOT

os.environ["KERNELOPT_DEVICE"] = "cpu"
from kernelopt.worker import bundle_state  # noqa: E402
from kernelopt.worker.capture import capture as cap  # noqa: E402
from kernelopt.worker.ops import bundle_ops  # noqa: E402

HELION_CORPUS = sorted((CORPUS / "helion").glob("*/meta.json"))
EXAMPLES = ROOT / "examples" / "helion"
needs_helion = pytest.mark.skipif(importlib.util.find_spec("helion") is None,
                                  reason="helion is not installed: pip install helion==1.5.0")


@pytest.mark.parametrize("meta_path", HELION_CORPUS, ids=lambda p: p.parent.name)
def test_engine_reads_helion_bundles(kernelopt_bin, meta_path):
    bundle = meta_path.parent
    meta = json.loads(meta_path.read_text())
    assert meta["input_kind"] == "helion" and meta["helion"]["version"]
    (hk,) = meta["helion"]["kernels"]
    assert hk["config"] and hk["chosen_by"] == "the kernel's config="
    r = subprocess.run([kernelopt_bin, "inspect", bundle, "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    kernels = json.loads(r.stdout)["kernels"]
    assert [k["name"] for k in kernels] == [d["variable"] for d in meta["kernels"]]
    assert all(k["name"].startswith("triton_helion_") and k["kind"] == "user_autotune" for k in kernels)
    module = (bundle / "module_0.py").read_text()
    assert "import helion" not in module and "from helion" not in module  # runs without Helion


def test_helion_helpers_are_copied_into_the_kernel():
    module = (CORPUS / "helion" / "softmax" / "module_0.py").read_text()
    assert "def helion_triton_helpers__max_propagate_nan(" in module
    assert "helion_triton_helpers__max_propagate_nan(load, 1)" in module
    assert "helion_triton_helpers." not in module


@needs_helion
def test_capture_uses_the_kernels_config_and_matches_helion(tmp_path):
    meta = cap.capture(EXAMPLES / "rms_norm.py", tmp_path / "b", device="cpu")
    assert meta["input_kind"] == "helion" and meta["launcher"] == "rms_norm"
    assert meta["helion"]["kernels"][0]["config"]["block_sizes"] == [2]
    assert meta["eager_vs_compiled"]["max_abs"] == 0.0  # the same generated kernel, the same config
    module = (tmp_path / "b" / "module_0.py").read_text()
    assert "_BLOCK_SIZE_0 = tl.constexpr(2)" in module and ".run(arg0_1, arg1_1, buf0, " in module


@needs_helion
@pytest.mark.parametrize("meta_path", HELION_CORPUS, ids=lambda p: p.parent.name)
def test_corpus_bundle_matches_the_helion_kernel(meta_path):
    req = {"bundle": str(meta_path.parent)}
    base = bundle_ops.run_baseline(req)  # the module against the Helion kernel's own output
    assert base["match"] and base["launches"] >= 1, base
    state = bundle_state.get_bundle(req)
    for rec in state.launches:
        r = bundle_ops.run_kernel(dict(req, kernel=state.kernel_name(0, rec.kernel), launch=rec.index, seed=5))
        assert r["match"], r["comparison"]
    assert bundle_ops.run_fp64(req)["baseline_vs_fp64"]["ok"]  # the file's reference() in float64
    bundle_state.loaded_bundles.clear()


@needs_helion
def test_helion_launcher_result_loads_in_python():
    import kernelopt
    from kernelopt.worker.bundle_runner import rebuild_problem

    bundle = CORPUS / "helion" / "add_relu"
    model, inputs = rebuild_problem(bundle, "cpu")
    got = kernelopt.load_launcher(bundle, device="cpu")(*inputs)
    assert torch.equal(got, model(*inputs)) and torch.equal(got, torch.relu(inputs[0] + inputs[1]))


@needs_helion
def test_kernel_without_config_gets_helions_default_and_keeps_it(tmp_path):
    # No config=: capture takes Helion's default config (no autotune asked for, none possible on a CPU),
    # pins it, and the rebuilt reference runs that config instead of starting Helion's autotuner.
    text = (EXAMPLES / "add_relu.py").read_text().replace("N = 65536", "N = 4096").replace(
        "@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4))", '@helion.kernel(autotune_effort="quick")')
    (tmp_path / "add_relu_auto.py").write_text(text)
    meta = cap.capture(tmp_path / "add_relu_auto.py", tmp_path / "b", device="cpu")
    assert meta["helion"]["kernels"][0]["chosen_by"] == "Helion's default config"
    base = bundle_ops.run_baseline({"bundle": str(tmp_path / "b")})
    assert base["match"], base
    bundle_state.loaded_bundles.clear()


@needs_helion
def test_a_helion_winner_is_printed_as_a_pasteable_helion_config(kernelopt_bin, tmp_path):
    """The Helion kernel's accepted config comes back as the line to paste into @helion.kernel(config=...):
    its captured config (block sizes) with the winner's launch options. report.json carries that captured
    config (helion_config) and the search's candidates vary launch options only, what helion.Config can spell.
    In CPU mode a candidate is accepted on correctness (G4 needs a GPU); the budget's estimate of its cascade
    starts from the warm recorded run, not the first run's one-time costs (2.1 s against 0.2 s here), so a
    cascade of a few seconds is not refused as one of minutes."""
    bundle = CORPUS / "helion" / "add_relu"
    r = subprocess.run([kernelopt_bin, "optimize", bundle, "--device", "cpu", "--budget", "60", "--out", tmp_path / "o"],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TRITON_INTERPRET="1", KERNELOPT_DB=str(tmp_path / "r.db")))
    assert r.returncode == 0, r.stderr
    (k,) = json.loads((tmp_path / "o" / "report.json").read_text())["kernels"]
    meta = json.loads((bundle / "meta.json").read_text())
    assert k["kind"] == "user_autotune" and k["helion_config"] == meta["helion"]["kernels"][0]["config"]
    configs = [c["config"] for c in k["candidates"] if c.get("config")]
    assert configs and all(set(c) <= {"num_warps", "num_stages"} for c in configs), configs
    assert k["accepted"], (k["note"], r.stderr[-2000:])
    (chosen,) = [c["config"] for c in k["candidates"] if c["id"] == k["chosen"]]
    line = "helion.Config(block_sizes=[1024], num_stages={num_stages}, num_warps={num_warps})".format(**chosen)
    assert f"paste: {line}" in r.stdout, r.stdout
    assert line in (tmp_path / "o" / "report.md").read_text()
