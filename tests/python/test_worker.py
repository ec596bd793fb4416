"""The worker process over its JSON-lines protocol on real corpus bundles, in
CPU mode (CI) or on the GPU (KERNELOPT_TEST_DEVICE=cuda, the H200 tier): the baseline module matches eager, launches are recorded with their
real arguments, a kernel runs alone (its own source, a pinned config, a
candidate), and failures come back as records while the worker lives on."""

import os

import pytest
from conftest import CORPUS, ROOT, worker_process


DEVICE = os.environ.get("KERNELOPT_TEST_DEVICE", "cpu")


@pytest.fixture(scope="module")
def worker():
    with worker_process(DEVICE) as ask:
        yield ask


BUNDLE = str(CORPUS / "softmax_lastdim")


def kernel_source(bundle, name):
    import ast

    src = (CORPUS / bundle / "module_0.py").read_text()
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args \
                and getattr(node.value.args[0], "value", None) == name:
            return node.value.args[1].value
    raise KeyError(name)


def test_hello(worker):
    r = worker("hello")
    assert r["ok"] and r["device"] == DEVICE and r["protocol"] == 1


def test_baseline_matches_eager_and_records_launches(worker):
    r = worker("run_baseline", bundle=BUNDLE)
    assert r["ok"], r
    assert r["match"], r["comparison"]
    assert r["launches"] >= 1
    lst = worker("record_launches", bundle=BUNDLE)["launches"]
    assert lst[0]["name"].startswith("triton_")
    assert all("shape" in a or "value" in a for a in lst[0]["args"])


def test_run_kernel_original_and_pinned_config(worker):
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    r = worker("run_kernel", bundle=BUNDLE, kernel=name)
    assert r["ok"] and r["match"], r
    # The same source with a different (valid) block size computes the same thing.
    r = worker("run_kernel", bundle=BUNDLE, kernel=name, config={"XBLOCK": 1})
    assert r["ok"] and r["match"], r


def test_run_kernel_wrong_candidate_is_caught(worker):
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    src = kernel_source("softmax_lastdim", name)
    assert "libdevice.exp(" in src
    wrong = src.replace("libdevice.exp(", "libdevice.exp(1.5 * ", 1)
    r = worker("run_kernel", bundle=BUNDLE, kernel=name, source=wrong)
    assert r["ok"] and not r["match"]
    assert any(not a["ok"] and a["max_abs"] > 0 for a in r["comparison"]["args"])


def test_fresh_seeds_and_valid_ranges(worker):
    """Fresh random inputs per seed: the original agrees with itself; a wrong candidate is caught on
    every seed; integer arguments (class indices) stay within the recorded range."""
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    wrong = kernel_source("softmax_lastdim", name).replace("libdevice.exp(", "libdevice.exp(1.5 * ", 1)
    for seed in range(5):
        r = worker("run_kernel", bundle=BUNDLE, kernel=name, seed=seed, config={"XBLOCK": 2})
        assert r["ok"] and r["match"] and r["inputs"] == f"seed {seed}", r
        r = worker("run_kernel", bundle=BUNDLE, kernel=name, seed=seed, source=wrong)
        assert r["ok"] and not r["match"]
    ce = str(CORPUS / "cross_entropy")
    for launch in worker("record_launches", bundle=ce)["launches"]:
        r = worker("run_kernel", bundle=ce, kernel=launch["name"], seed=3)
        assert r["ok"] and r["match"], r  # out-of-range class indices would fault or differ


def test_poisoned_outputs_expose_partial_writes(worker):
    """A candidate that skips part of its output passes on unpoisoned buffers holding the right
    values by accident, but not once outputs are poisoned."""
    lst = worker("record_launches", bundle=BUNDLE)["launches"]
    name = lst[0]["name"]
    src = kernel_source("softmax_lastdim", name)
    store = src.rindex("tl.store(")
    end = src.index(")\n", store)
    partial = src[:end] + " & (x0 < 8)" + src[end:] if ", xmask" in src[store:end] else None
    assert partial, src[store:end]
    outputs = [i for i, a in enumerate(lst[0]["args"]) if "shape" in a][1:]  # out_ptr args follow in_ptr0
    r = worker("run_kernel", bundle=BUNDLE, kernel=name, source=partial, poison=outputs, seed=1)
    assert r["ok"] and not r["match"]
    bad = [a for a in r["comparison"]["args"] if not a["ok"]]
    assert bad and not bad[0]["nan_positions_match"]
    r = worker("run_kernel", bundle=BUNDLE, kernel=name, poison=outputs, seed=1, repeat=True)
    assert r["ok"] and r["match"] and r["deterministic"]


def test_restitched_module_and_fp64(worker):
    src = (CORPUS / "softmax_lastdim" / "module_0.py").read_text()
    r = worker("run_module", bundle=BUNDLE, source=src)
    assert r["ok"] and r["vs_baseline"]["ok"] and r["vs_eager"]["ok"], r
    # The baseline against a second run of itself: the model's own spread (none for this model).
    assert r["baseline_self"]["ok"] and all(o["max_abs"] == 0 for o in r["baseline_self"]["outputs"]), r
    bad = src.replace("libdevice.exp(", "libdevice.exp(1.5 * ", 1)
    r = worker("run_module", bundle=BUNDLE, source=bad)
    assert r["ok"] and not r["vs_baseline"]["ok"]
    r = worker("run_module", bundle=BUNDLE, source=bad, fp64=True)
    assert r["ok"] and not r["candidate_vs_fp64"]["ok"] and r["baseline_vs_fp64"]["ok"]
    r = worker("run_fp64", bundle=BUNDLE)
    assert r["ok"] and r["baseline_vs_fp64"]["ok"], r
    assert 0 < r["baseline_vs_fp64"]["outputs"][0]["max_abs"] < 1e-5


def test_kernel_that_raises_is_a_record_and_worker_lives(worker):
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    src = kernel_source("softmax_lastdim", name)
    broken = src.replace("libdevice.exp(", "tl_math.no_such_function(", 1)
    r = worker("run_kernel", bundle=BUNDLE, kernel=name, source=broken)
    assert not r["ok"] and "no_such_function" in r["error"]
    assert worker("hello")["ok"]


def test_bad_bundle_is_a_record(worker, tmp_path):
    r = worker("load_bundle", bundle=str(tmp_path))
    assert not r["ok"] and "kernelopt capture" in r["error"]
    r = worker("run_kernel", bundle=BUNDLE, kernel="no_such_kernel")
    assert not r["ok"] and "no_such_kernel" in r["error"]


def test_gpu_timing_and_profile(worker):
    """On the GPU: isolated timing and the module profile; on the CPU: 'not measured', never a time."""
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    t = worker("time_kernel", bundle=BUNDLE, kernel=name, config={"XBLOCK": 1}, reps=20)
    p = worker("profile", bundle=BUNDLE, reps=5)
    assert t["ok"] and p["ok"]
    if DEVICE == "cpu":
        assert not t["measured"] and not p["measured"]
        return
    assert 0 < t["baseline"]["p20_ms"] <= t["baseline"]["median_ms"] <= t["baseline"]["p80_ms"]
    assert t["candidate"]["median_ms"] > 0
    assert any(k["name"] == name and k["triton"] for k in p["kernels"])
    assert 0 < p["kernel_sum_ms"] <= p["module"]["median_ms"] * 1.5


ERRORS = ROOT / "tests" / "error"
GELU = str(CORPUS / "gelu_scale")
GELU_KERNEL = "triton_poi_fused_add_gelu_mul_0"


def candidate(name):
    """A tests/error file's kernel source (the two header comment lines are harmless)."""
    return (ERRORS / name).read_text()


def test_compile_kernel(worker):
    """G1's `compiles`: the original compiles; a compile error comes back as data with the compiler's
    text, and the worker goes on serving."""
    name = worker("record_launches", bundle=BUNDLE)["launches"][0]["name"]
    r = worker("compile_kernel", bundle=BUNDLE, kernel=name, source=kernel_source("softmax_lastdim", name))
    assert r["ok"] and r["compiled"] and r["how"], r
    r = worker("compile_kernel", bundle=BUNDLE, kernel=name, source=candidate("g1_compile_error.py"))
    assert r["ok"] and not r["compiled"] and "power of 2" in r["error"], r
    r = worker("compile_kernel", bundle=GELU, kernel=GELU_KERNEL, source=candidate("g1_compile_unknown_function.py"))
    assert r["ok"] and not r["compiled"] and "erf_fast" in r["error"], r
    assert worker("hello")["ok"]


def test_garbage_poison_catches_a_candidate_that_skips_written_looking_outputs(worker):
    """g2_cached_output writes only where the output is NaN: NaN poisoning alone lets it pass, the
    finite garbage fill does not."""
    src = candidate("g2_cached_output.py")
    outputs = [2]  # out_ptr0
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, source=src, poison=outputs, seed=0, poison_fill="nan")
    assert r["ok"] and r["match"], r
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, source=src, poison=outputs, seed=0,
               poison_fill="garbage")
    assert r["ok"] and not r["match"] and r["poison_fill"] == "garbage"
    # The original itself agrees with itself under the garbage fill (the same fill in both runs).
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, poison=outputs, seed=0, poison_fill="garbage",
               repeat=True)
    assert r["ok"] and r["match"] and r["deterministic"], r
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, poison=outputs, poison_fill="zeros")
    assert not r["ok"] and "poison_fill" in r["error"]


def test_tolerances_in_requests(worker):
    """The fp16 round trip is ~1e-3 off: outside the default fp32 tolerance, inside a looser one."""
    src = candidate("g2_precision_downgrade.py")
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, source=src)
    assert r["ok"] and not r["match"]
    loose = {"float32": {"atol": 1e-2, "rtol": 1e-2}}
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, source=src, tolerances=loose)
    assert r["ok"] and r["match"] and r["comparison"]["args"][2]["rtol"] == 1e-2, r
    r = worker("run_kernel", bundle=GELU, kernel=GELU_KERNEL, tolerances={"fp32": {"atol": 1, "rtol": 1}})
    assert not r["ok"] and "unknown dtype" in r["error"]


def test_stitched_modules_and_module_timing(worker):
    """run_module takes one module text per graph (`sources`); time_module times baseline and
    stitched modules on the GPU and says "not measured" on the CPU."""
    src = (CORPUS / "softmax_lastdim" / "module_0.py").read_text()
    bad = src.replace("libdevice.exp(", "libdevice.exp(1.5 * ", 1)
    r = worker("run_module", bundle=BUNDLE, sources=[src])
    assert r["ok"] and r["vs_baseline"]["ok"], r
    r = worker("run_module", bundle=BUNDLE, sources=[bad], fp64=True)
    assert r["ok"] and not r["vs_baseline"]["ok"] and not r["candidate_vs_fp64"]["ok"]
    r = worker("run_module", bundle=BUNDLE, sources=[src, src])
    assert not r["ok"] and "one module text" in r["error"]
    t = worker("time_module", bundle=BUNDLE, sources=[src], reps=10)
    assert t["ok"], t
    if DEVICE == "cpu":
        assert not t["measured"]
        return
    for k in ("baseline", "optimized"):
        assert 0 < t[k]["p20_ms"] <= t[k]["median_ms"] <= t[k]["p80_ms"], t
    # The same module through the same call path: the same time within noise.
    assert 0.7 < t["optimized"]["median_ms"] / t["baseline"]["median_ms"] < 1.4, t


def test_timed_repetitions_start_from_poisoned_outputs():
    """G4's prepare (run before every timed repetition, outside the timed region) restores the
    inputs and poisons the pure outputs, so nothing a call left in an output survives to the next."""
    import torch
    from kernelopt.worker.measure.launches import LaunchRecord
    from kernelopt.worker.ops.gpu_ops import restore_and_poison

    rec = LaunchRecord(0, "k", 0, [torch.arange(4.0), torch.zeros(4), torch.zeros(4, dtype=torch.int32)])
    args = rec.fresh_args()
    prepare = restore_and_poison(args, rec, poisoned=(1, 2))
    for a in args:
        a.fill_(7)  # what a previous call left behind
    prepare()
    assert torch.equal(args[0], rec.args[0])
    assert torch.isnan(args[1]).all() and (args[2] == torch.iinfo(torch.int32).min).all()


@pytest.mark.skipif(DEVICE != "cuda", reason="GPU tier (KERNELOPT_TEST_DEVICE=cuda)")
def test_synced_interval_counts_work_on_a_side_stream():
    """Work a function enqueues on another stream escapes the events of the current stream but not
    the `synced` interval, which ends after a device-wide synchronize: G4 compares the two."""
    import torch
    from kernelopt.worker.measure import timing

    x = torch.randn(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    cycles = int(timing._cycles_per_ms() * 3.0)  # about 3 ms of spinning on the side stream

    def honest():
        x.mul_(1.0)

    def hidden():
        x.mul_(1.0)
        with torch.cuda.stream(side):
            torch.cuda._sleep(cycles)

    h, s = timing.time_interleaved([honest, hidden], reps=10)
    assert s["median_ms"] < 1.0, s  # the current stream's events do not see the side stream
    assert s["synced"]["median_ms"] - s["median_ms"] > 1.5, s
    assert h["synced"]["median_ms"] - h["median_ms"] < 1.0, h


def test_unknown_op_and_bad_json(worker):
    r = worker("frobnicate")
    assert not r["ok"] and "unknown op" in r["error"]
