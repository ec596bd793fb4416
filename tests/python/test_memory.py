"""The worker's memory plan (docs/memory.md) in CPU mode, through the same code the GPU runs:

- comparisons in slices give exactly the whole-tensor result (every number of the report);
- with the worker's budget capped far below what whole copies need, G2 on captured bundles takes its
  lean path (shared read-only inputs, sliced comparisons) and reaches the same verdicts, accepted and
  rejected candidates alike, with the same numbers;
- three bundles through one worker: what it holds returns to the starting level once they are forgotten;
- what cannot fit is an `oom` record naming the stage, the bytes needed and free; later requests, and the
  suite's later problems, are unaffected.
"""

import contextlib
import json
import os
import pathlib
import shutil
import subprocess

import pytest
import torch
from conftest import CORPUS, gpu_tier, worker_process

from kernelopt.worker.measure import compare as cmp
from kernelopt.worker.measure import memory
from kernelopt.worker.measure.launches import kernel_decls

DEVICE = os.environ.get("KERNELOPT_TEST_DEVICE", "cpu")


def _tensors(seed=0):
    g = torch.Generator().manual_seed(seed)
    want = torch.randn(37, 41, 53, generator=g)
    got = want + 3e-5 * torch.randn(37, 41, 53, generator=g)
    for t in (want, got):  # special values at the same positions, one NaN mismatch elsewhere
        t[3, 4, 5], t[10, 0, 2], t[30, 40, 52] = float("nan"), float("inf"), float("-inf")
    got[5, 5, 5] = 2.0 * want[5, 5, 5] + 1.0
    return got, want


@pytest.fixture
def tiny_budget():
    memory.set_budget(memory.held_bytes() + 64 * 1024)
    yield
    memory.set_budget(None)


def _cases():
    got, want = _tensors()
    half_g, half_w = got.to(torch.bfloat16), want.to(torch.bfloat16)
    ints = torch.randint(0, 9, (50, 3000), generator=torch.Generator().manual_seed(2))
    ints_bad = ints.clone()
    ints_bad[49, 2999] += 1
    return {
        "float32": (got, want, False),
        "float32 equal": (want.clone(), want, False),
        "transposed views": (got.transpose(0, 2), want.transpose(0, 2), False),
        "layouts differ": (got.transpose(0, 2).contiguous(), want.transpose(0, 2), False),
        "gaps in storage": (got[:, :, :50], want[:, :, :50], False),
        "bfloat16": (half_g, half_w, False),
        "against float64": (got, want.double() + 1e-9, True),
        "int64": (ints_bad, ints, False),
        "one long row": (got.reshape(1, -1), want.reshape(1, -1), False),
    }


def test_sliced_comparison_gives_the_whole_comparison(tiny_budget):
    memory.set_budget(None)
    whole = {k: cmp.compare_tensor(g, w, promote=p) for k, (g, w, p) in _cases().items()}
    memory.set_budget(memory.held_bytes() + 64 * 1024)
    assert cmp.slice_elements(48) == 1024  # the plan's floor: every case here is cut into many slices
    for k, (g, w, p) in _cases().items():
        assert len(list(cmp.slices(g, w, 48))) > 50, k
        assert cmp.compare_tensor(g, w, promote=p) == whole[k], k
    # The cases mean something: the planted mismatch fails, the equal copy passes.
    assert not whole["float32"]["ok"] and whole["float32 equal"]["ok"] and whole["int64"]["mismatched"] == 1


def test_an_exhausted_budget_is_an_oom_naming_stage_and_bytes(tiny_budget):
    with pytest.raises(memory.WorkerOOM) as e:
        memory.reserve(10 << 20, "a test stage")
    assert e.value.stage == "a test stage" and e.value.needed == 10 << 20 and e.value.free < 10 << 20
    assert str(e.value).startswith("out of memory in a test stage: needs 10.0 MiB, ")


@pytest.fixture(scope="module")
def worker():
    with worker_process(DEVICE) as ask:
        yield ask


def _kernel_source(bundle: str, name: str) -> str:
    text = (CORPUS / bundle / "module_0.py").read_text()
    return next(src for kernel, src in kernel_decls(text).values() if kernel == name)


def _wrong(src: str) -> str:
    """The kernel with its last stored value scaled: outputs wrong wherever they are not zero."""
    store = src.rindex("tl.store(")
    args_start = store + len("tl.store(")
    first_comma = src.index(",", args_start)
    second = src.index(",", first_comma + 1)
    value = src[first_comma + 1:second].strip()
    return src[:first_comma + 1] + f" 1.25 * {value} + 0.5" + src[second:]


def _verdicts(r: dict) -> dict:
    assert r["ok"], r
    per = [{k: a.get(k) for k in ("arg", "ok", "max_abs", "scale", "mismatched", "nan_positions_match")}
           for a in r["comparison"]["args"]]
    return {"match": r["match"], "rounding_only": r["rounding_only"], "deterministic": r.get("deterministic"),
            "args": per}


# Kernels of captured bundles: a row softmax (reads and writes one row per program), a persistent
# layer norm (several outputs), a scan, a pool (windowed loads) and an arg-reduction (int64 output).
# On a GPU the large bundles of the same kinds: the allocator's own use moves by more than a small
# bundle's bytes between requests, which would blur the budget the test sets. (Not the long scan:
# its split form's workspace is scratch, which only the engine's requests name.)
BUNDLES = (["softmax_lastdim", "layer_norm", "cumsum_lastdim", "max_pool2d", "argmax_dim"] if DEVICE == "cpu"
           else ["softmax_large", "layer_norm_large", "max_pool2d_large"])


def _storage_bytes(args: list) -> int:
    size = {"float32": 4, "int64": 8, "bfloat16": 2, "float16": 2, "int32": 4, "bool": 1, "float64": 8}
    import math
    return sum(math.prod(a["shape"]) * size[a["dtype"]] for a in args if "shape" in a)


@pytest.mark.parametrize("name", BUNDLES)
def test_a_capped_budget_takes_the_lean_path_with_the_same_verdicts(worker, name):
    bundle = str(CORPUS / name)
    launch = worker("record_launches", bundle=bundle)["launches"][0]
    kernel, args = launch["name"], launch["args"]
    wrong = _wrong(_kernel_source(name, kernel))
    requests = [dict(seed=None, repeat=True), dict(seed=0), dict(seed=1, poison_fill="garbage")]
    candidates = {"original": None, "wrong": wrong}

    def run_all():
        out = {}
        for cname, src in candidates.items():
            for req in requests:
                kw = {k: v for k, v in req.items() if v is not None}
                r = worker("run_kernel", bundle=bundle, kernel=kernel, source=src, **kw)
                out[(cname, json.dumps(req))] = (r.get("path"), _verdicts(r))
        return out

    worker("memory", target_ratio=1000.0)  # no soft target: whole copies wherever the budget allows
    try:
        whole = run_all()
    finally:
        worker("memory", target_ratio=None)
    assert all(path == "whole" for path, _ in whole.values())
    assert all(v["match"] for (c, _), (_, v) in whole.items() if c == "original")
    assert not any(v["match"] for (c, _), (_, v) in whole.items() if c == "wrong")
    m = worker("memory")
    # Far below two whole copies of the launch's arguments; room for the lean path's copies of what
    # the kernel writes (and for a seed's inputs). In use: the allocator's count on a GPU (what the
    # worker holds on the host does not count there), the held bytes in CPU mode.
    worker("memory", budget_bytes=m["in_use_bytes"] + int(1.7 * _storage_bytes(args)))
    try:
        lean = run_all()
    finally:
        assert worker("memory", budget_bytes=None)["ok"]
    assert all(path == "lean" for path, _ in lean.values()), lean
    assert {k: v for k, (_, v) in lean.items()} == {k: v for k, (_, v) in whole.items()}


def test_held_memory_returns_to_its_level_after_three_bundles(worker):
    worker("forget_bundles")
    start = worker("memory")
    start, start_in_use = start["held_bytes"], start["in_use_bytes"]
    for name in ["softmax_lastdim", "layer_norm", "cumsum_lastdim"]:
        bundle = str(CORPUS / name)
        kernel = worker("record_launches", bundle=bundle)["launches"][0]["name"]
        assert worker("run_kernel", bundle=bundle, kernel=kernel, seed=0)["match"]
        src = (CORPUS / name / "module_0.py").read_text()
        assert worker("run_module", bundle=bundle, source=src, fp64=True)["ok"]
    assert worker("memory")["held_bytes"] > start
    r = worker("forget_bundles")
    assert r["forgotten"] == 3 and r["held_bytes"] == start
    assert worker("memory")["held_bytes"] == start
    # On a GPU the allocator's count returns too (vendor libraries keep small workspaces of their own).
    assert r["in_use_bytes"] <= start_in_use + (256 << 20 if DEVICE == "cuda" else 0), (r, start_in_use)


def test_a_request_that_cannot_fit_is_an_oom_record_and_the_worker_goes_on(worker):
    bundle = str(CORPUS / "row_sum_long")
    worker("forget_bundles")
    worker("memory", budget_bytes=1 << 20)
    try:
        r = worker("run_baseline", bundle=bundle)
    finally:
        worker("memory", budget_bytes=None)
    assert not r["ok"] and r["failure"] == "oom", r
    assert r["oom"]["stage"] == "the baseline run" and r["oom"]["needed_bytes"] > r["oom"]["free_bytes"]
    assert r["error"].startswith("out of memory in the baseline run: needs ")
    r = worker("run_baseline", bundle=bundle)
    assert r["ok"] and r["match"], r


def test_memory_op_reports_the_plan(worker):
    r = worker("memory", reset_peak=True)
    assert r["ok"] and r["device"] == DEVICE and r["measured"] == (DEVICE == "cuda")
    for key in ("in_use_bytes", "held_bytes", "peak_bytes", "free_bytes", "budget_bytes"):
        assert isinstance(r[key], int) and r[key] >= 0, key
    bad = worker("memory", budget_bytes=-5)
    assert not bad["ok"] and "budget_bytes" in bad["error"]
    # Where the peak was reached: a request's name on a GPU, not measured in CPU mode.
    worker("run_baseline", bundle=str(CORPUS / "layer_norm"))
    where = worker("memory")["peak_request"]
    if DEVICE == "cuda":
        assert where["op"] == "run_baseline" and where["peak_bytes"] > 0, where
    else:
        assert where is None


def test_a_reference_that_can_be_made_again_is_dropped_and_remade():
    calls = []

    def make():
        calls.append(1)
        return {"y": torch.arange(1000, dtype=torch.float32) * 0.5}

    held = memory.HeldTree(make(), make)
    first = held.get()["y"].clone()
    held._release()  # what a spill does to it: nothing copied to the host
    held.on_host = True
    assert held.value is None and held.tensors() == [] and memory.storage_bytes(held.kept()) == 0
    assert torch.equal(held.get()["y"], first) and len(calls) == 2
    assert held.recomputable() and not held.on_host


def test_a_reference_that_comes_out_different_is_kept_from_then_on():
    values = iter([torch.ones(64), torch.full((64,), 2.0)])
    held = memory.HeldTree(next(values), lambda: next(values))
    held._release()
    held.on_host = True
    assert float(held.get().sum()) == 128  # made again, differently: a nondeterministic model
    assert not held.recomputable()  # its next spill copies it to the host like any other


def test_dropped_inputs_are_drawn_again_for_each_run():
    from kernelopt.worker.bundle_state import _Problem

    draws = []

    def redraw():
        draws.append(1)
        return [torch.linspace(-3, 3, 5000), 7]

    reserved = []
    reserve = memory.reserve
    memory.reserve = lambda need, stage, keep=(): (reserved.append((need, stage)), reserve(need, stage, keep))[1]
    try:
        _dropped_inputs_are_drawn_again(_Problem, redraw, draws, reserved)
    finally:
        memory.reserve = reserve


def _dropped_inputs_are_drawn_again(_Problem, redraw, draws, reserved):
    problem = _Problem(torch.nn.Linear(2, 2), redraw(), {}, "cpu", redraw, {"draw": 123456})
    assert problem.recomputable()
    problem._release()
    problem.on_host = True
    assert problem.tensors() == []  # nothing of the inputs held while dropped
    a = problem.run_inputs()
    assert torch.equal(a[0], torch.linspace(-3, 3, 5000)) and a[1] == 7 and len(draws) == 2
    # The run owns its draw (it may write into it) and nothing is kept beside it: the next run draws
    # again, and gets the same values even when this one wrote into its inputs.
    assert problem.inputs is None and problem.tensors() == []
    a[0].zero_()
    b = problem.run_inputs()
    assert len(draws) == 3 and b[0] is not a[0] and torch.equal(b[0], torch.linspace(-3, 3, 5000))
    # values() reads without taking: a kept draw stays, a dropped one is drawn and not kept.
    assert torch.equal(problem.values()[0], b[0]) and problem.inputs is None and len(draws) == 4
    # Each draw first made room for what a draw allocates (measured when the redraw was checked), the
    # problem's own drawing temporaries included.
    assert reserved == [(123456, "drawing the problem's inputs again")] * 3, reserved


def test_the_redraw_check_drops_the_first_draw_before_the_second(monkeypatch):
    """_redraw_if_same fingerprints the first draw and lets it go before drawing again (side by side with the
    problem's own drawing temporaries they were three inputs' worth on the device: 3.0x torch.compile's peak
    for a 3.9 GB input); the caller's list then holds the second draw. A second draw with other bytes is kept
    as the inputs, with no redraw; a redraw that fails gives the inputs drawn as the first time."""
    import weakref

    from kernelopt.worker import bundle_state

    monkeypatch.setattr(memory, "on_gpu", lambda: True)
    monkeypatch.setattr(memory, "SPILL_MIN_BYTES", 1)

    @contextlib.contextmanager
    def measured(needs, key):  # the allocator's peak stands in: what the second draw took
        yield
        needs[key] = 999

    monkeypatch.setattr(memory, "measured_peak", measured)
    values = torch.linspace(-3, 3, 5000)
    first = [values.clone(), 7]
    alive = weakref.ref(first[0])
    seen = {}

    def redraw():
        seen["first_alive"] = alive() is not None
        return [values.clone(), 7]

    monkeypatch.setattr(bundle_state, "input_redrawer", lambda d, dev: redraw)
    state = type("S", (), {"dir": "unused", "device": "cuda"})()
    inputs, needs = first, {}
    assert bundle_state._redraw_if_same(state, inputs, needs) is redraw
    assert seen["first_alive"] is False  # gone before the second draw
    assert needs == {"draw": 999}  # what every later draw makes room for
    assert inputs is first and torch.equal(inputs[0], values) and inputs[1] == 7

    # Other bytes the second time: kept as drawn, not redrawable.
    monkeypatch.setattr(bundle_state, "input_redrawer", lambda d, dev: lambda: [values + 1, 7])
    inputs = [values.clone(), 7]
    assert bundle_state._redraw_if_same(state, inputs) is None and torch.equal(inputs[0], values + 1)

    # A redraw that raises: the problem's inputs as rebuilt (the first draw is gone).
    def fails():
        raise RuntimeError("drawn on the CPU this time")

    monkeypatch.setattr(bundle_state, "input_redrawer", lambda d, dev: fails)
    monkeypatch.setattr(bundle_state, "rebuild_problem", lambda d, dev: (None, [values * 2, 7]))
    inputs = [values.clone(), 7]
    assert bundle_state._redraw_if_same(state, inputs) is None and torch.equal(inputs[0], values * 2)


def test_inputs_that_cannot_be_drawn_again_are_copied_for_each_run():
    from kernelopt.worker.bundle_state import _Problem

    x = torch.linspace(-3, 3, 100)
    problem = _Problem(torch.nn.Linear(2, 2), [x], {}, "cpu")
    a = problem.run_inputs()
    a[0].zero_()
    assert problem.inputs[0] is x and torch.equal(x, torch.linspace(-3, 3, 100))


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3, 5, 7),
    lambda: torch.randn(7, 5, 3).permute(2, 0, 1),  # channels-last-like strides, kept
    lambda: torch.randn(4, 6)[:, :3],  # gaps in its storage: converted whole
    lambda: torch.randn(2, 3).expand(4, 2, 3),  # overlapping: converted whole
])
def test_an_input_upcast_in_slices_equals_the_whole_upcast(make):
    # The float64 reference's inputs staged through the host (bundle_ops._float64_inputs): slices of
    # four elements must give exactly what one whole .double() gives, strides included where dense.
    x = make()
    y = memory.upcast_in_slices(x, "cpu", torch.float64, slice_elements=4)
    assert y.dtype == torch.float64 and torch.equal(y, x.double())
    if x.stride()[0] != 0 and x.is_contiguous() or x.dim() == 3 and x.stride()[0] == 1:
        assert y.stride() == x.stride()


@pytest.mark.parametrize("make", [
    lambda: torch.empty(5, 9),
    lambda: torch.empty(9, 5).t(),  # dense, transposed: filled in storage order
    lambda: torch.empty(4, 6)[:, :3],  # not dense: filled whole
    lambda: torch.empty(6, 4, dtype=torch.bfloat16),
    lambda: torch.empty(30, dtype=torch.int32),
    lambda: torch.empty(11, dtype=torch.bool),
])
def test_the_garbage_fill_is_drawn_in_fixed_slices_and_the_same_for_the_same_layout(make, monkeypatch):
    # G2's garbage poison (poison.py) is drawn slice by slice into the output: the original and the
    # candidate must still see the same values, finite and not constant, in every slice.
    from kernelopt.worker.measure import poison as p

    monkeypatch.setattr(p, "_SLICE", 7)
    a, b = make(), make()
    p.poison(a, "garbage", 3)
    p.poison(b, "garbage", 3)
    assert torch.equal(a, b)
    assert torch.isfinite(a.float()).all() and a.float().unique().numel() > 1
    c = make()
    p.poison(c, "garbage", 4)  # another seed, another fill
    assert not torch.equal(a, c)


def test_an_oom_problem_is_an_error_row_and_the_suite_goes_on(kernelopt_bin, tmp_path):
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    for name in ("cumsum_long_large", "softmax_lastdim"):  # 64 MiB of inputs and outputs, then 0.5 MiB
        shutil.copytree(CORPUS / name, suite / name)
    env = dict(os.environ, KERNELOPT_WORKER_MEMORY="16M")
    r = subprocess.run([kernelopt_bin, "bench", str(tmp_path / "suite"), "--device", "cpu", "--out",
                        str(tmp_path / "out"), "--db", str(tmp_path / "r.db"), "--budget-per-problem", "20"],
                       capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr
    rows = {json.loads(x)["problem"]: json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()}
    big = rows["level1/cumsum_long_large"]
    assert big["status"] == "error" and big["failure"] == "oom", big
    # The stage is the first model run the job makes: the baseline's, or (the budget having ruled out the
    # interpreter's baseline of this bundle up front) the bench's own run of the result.
    assert ("out of memory in the baseline run" in big["reason"] or "out of memory in a model run" in big["reason"]), big
    assert "needs 64.0 MiB" in big["reason"] and "16.0 MiB free" in big["reason"], big
    assert rows["level1/softmax_lastdim"]["status"] == "optimized", rows["level1/softmax_lastdim"]


def test_a_live_after_is_checked_at_recording_and_dropped(monkeypatch):
    # No room to copy what a launch changed: the record keeps the live buffer, and the check it is
    # kept for (the original alone reproduces it) runs as soon as the recording ends, so the bytes go.
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bench_ops, bundle_ops

    from kernelopt.worker.measure.launches import LaunchRecord

    monkeypatch.setenv("KERNELOPT_DEVICE", "cpu")
    monkeypatch.setattr(memory, "fits_now", lambda need: False)
    # Each record comes back to the device before its check (one spilled to the host while later
    # launches were recorded was launched on host tensors on the GPU).
    used = []
    use = LaunchRecord.use
    monkeypatch.setattr(LaunchRecord, "use", lambda self, stage: (used.append((id(self), stage)), use(self, stage))[1])
    try:
        bundle_ops.run_baseline({"bundle": str(CORPUS / "softmax_lastdim")})
        state = bundle_state.get_bundle({"bundle": str(CORPUS / "softmax_lastdim")})
        assert state.launches
        for rec in state.launches:
            assert rec.after == []
            assert rec.isolated is not None and rec.isolated["ok"], rec.isolated
            assert (id(rec), "checking a launch's original alone") in used
    finally:
        bench_ops.forget_bundles({})


@contextlib.contextmanager
def _baseline_state(monkeypatch, name: str):
    """A corpus bundle's state in this process after its baseline run (CPU mode), forgotten after."""
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bench_ops, bundle_ops

    monkeypatch.setenv("KERNELOPT_DEVICE", "cpu")
    bundle = {"bundle": str(CORPUS / name)}
    try:
        bundle_ops.run_baseline(bundle)
        yield bundle_state.get_bundle(bundle)
    finally:
        bench_ops.forget_bundles({})


def test_a_seeds_draw_takes_the_statistics_first_and_keeps_no_record(monkeypatch):
    # The seed's reservation keeps nothing: the record's statistics are taken before it, so the plan may send
    # the record to the host while the draw is made (kept beside it, the two set a 244 MB max pool's peak at
    # 2.55x torch.compile's).
    from kernelopt.worker.ops import bundle_ops

    with _baseline_state(monkeypatch, "softmax_lastdim") as state:
        rec = state.launches[0]
        seen = []
        reserve = memory.reserve

        def spy(need, stage, keep=()):
            if stage.startswith("G2 (inputs for seed"):
                seen.append((rec.has_stats(), keep))
            return reserve(need, stage, keep=keep)

        monkeypatch.setattr(memory, "reserve", spy)
        r = bundle_ops.run_kernel({"bundle": str(CORPUS / "softmax_lastdim"), "kernel": rec.kernel, "seed": 0})
        assert r["match"], r
        assert seen == [(True, ())], seen
        tensors = [i for i, a in enumerate(rec.args) if isinstance(a, torch.Tensor)]
        assert sorted(rec._stats) == tensors


def test_a_launch_on_host_copies_of_a_gpu_record_is_named(monkeypatch):
    # A record still on the host when its kernel is launched (one spilled while later launches were
    # recorded) is a clear error naming the record, not Triton's "argument 9 must be int, not None".
    from kernelopt.worker.ops import bundle_ops

    with _baseline_state(monkeypatch, "softmax_lastdim") as state:
        rec = state.launches[0]
        runs = bundle_ops._KernelRuns(state, rec, None, None, (), "nan")
        launcher = getattr(state.modules[rec.graph], rec.kernel)
        assert runs.run(launcher)  # the record's own device (the host here): it launches
        rec.device = torch.device("cuda")  # recorded on a GPU, its copies on the host
        with pytest.raises(RuntimeError, match="not brought back"):
            runs.run(launcher)


@pytest.mark.parametrize("make", [
    lambda: torch.randn(1000, 37),
    lambda: torch.randn(7, dtype=torch.bfloat16),  # 14 bytes: three words and a two-byte tail
    lambda: torch.randint(-2**31, 2**31 - 1, (513,), dtype=torch.int32),  # sums that wrap in int64
])
def test_a_fingerprint_does_not_depend_on_its_slices(make):
    # The lean G2 path fingerprints a shared input before and after the runs; the pair must be the
    # same for any slice size (small slices keep its temporaries small) and must see one changed word.
    x = make()
    whole = memory.fingerprint(x, slice_words=1 << 22)
    assert memory.fingerprint(x, slice_words=5) == whole == memory.fingerprint(x, slice_words=1)
    assert memory.fingerprint(x, 3, torch.device("cpu")) == whole  # worked elsewhere: the same pair
    y = x.clone()
    flat = y.view(-1)
    flat[len(flat) // 2] = flat[len(flat) // 2] + 1 if y.dtype != torch.int32 else flat[len(flat) // 2] ^ 1
    assert memory.fingerprint(y, slice_words=5) != whole


def test_the_compiled_peaks_target_keeps_fixed_headroom_for_small_problems():
    # The soft target: 2.3x torch.compile's peak, never closer to it than the fixed headroom, never
    # above the budget (docs/memory.md).
    memory.set_budget(100 << 30)
    try:
        memory.set_compiled_peak(64 << 20)
        assert memory.target() == (64 << 20) + memory.fixed_headroom()
        memory.set_compiled_peak(8 << 30)
        assert memory.target() == int(memory.TARGET_RATIO * (8 << 30))
        memory.set_compiled_peak(60 << 30)
        assert memory.target() == 100 << 30
    finally:
        memory.set_compiled_peak(None)
        memory.set_budget(None)


def test_the_memory_history_finds_the_peak_and_what_was_alive_there():
    # KERNELOPT_MEMORY_HISTORY's replay (memory_history.summarize) over an allocator trace: the peak
    # is where the most bytes were alive, grouped by the worker's own frames.
    from kernelopt.worker.measure import memory_history as mh

    mib = 1 << 20
    here = [{"filename": "/x/kernelopt/worker/measure/memory.py", "line": 7, "name": "fingerprint"}]
    there = [{"filename": "/x/torch/foo.py", "line": 1, "name": "inner"},
             {"filename": "/x/kernelopt/worker/measure/compare.py", "line": 9, "name": "slices"}]
    events = [
        {"action": "alloc", "addr": 1, "size": 100 * mib, "frames": here},
        {"action": "alloc", "addr": 2, "size": 50 * mib, "frames": there},
        {"action": "free_completed", "addr": 1, "size": 100 * mib},
        {"action": "alloc", "addr": 3, "size": 80 * mib, "frames": there},
        {"action": "free_completed", "addr": 2, "size": 50 * mib},
    ]
    text = mh.summarize(events, 10 * mib)
    assert text.startswith("peak 160 MiB (10 MiB in use"), text
    assert "100.0 MiB  memory.py:7 fingerprint" in text and "50.0 MiB  compare.py:9 slices" in text
    assert "80.0" not in text  # allocated after the peak


def test_comparisons_and_statistics_never_write_the_tensors_they_read(monkeypatch):
    # The comparison masks its float64 slices in place, and the statistics' second pass works in
    # float64: a float64 tensor (the float64 reference, a float64 record) must be copied first, not
    # converted to itself and overwritten (a reference whose values became their magnitudes let a
    # candidate through G3).
    from kernelopt.worker.measure import launches

    want = torch.randn(300, 7, dtype=torch.float64)
    want[3, 3] = float("nan")
    got = want + 1e-9
    w0, g0 = want.clone(), got.clone()
    cmp.compare_tensor(got, want)
    cmp.compare_tensor(got, want, promote=True)
    assert torch.equal(want.nan_to_num(), w0.nan_to_num()) and torch.equal(got.nan_to_num(), g0.nan_to_num())
    monkeypatch.setattr(launches, "_CHUNK", 100)  # the sliced (two-pass) statistics
    launches._mean_std(want.view(-1), torch.float64)
    launches._finite_range(want.view(-1))
    assert torch.equal(want.nan_to_num(), w0.nan_to_num()) and bool(want[3, 3].isnan())


def test_a_step_that_passes_the_target_after_every_spill_does_not_fit(monkeypatch):
    # What no spill frees (the request's own tensors, objects too small to move) plus the step's need
    # is held against the soft target: the eager model of a half-precision norm (float32 temporaries
    # of 3.5x torch.compile's peak) goes to the host instead of emptying the device for nothing.
    class Held(memory.Spillable):
        def __init__(self, n):
            self.n = n
            super().__init__()

        def device_bytes(self):
            return self.n

    monkeypatch.setattr(memory, "on_gpu", lambda: True)
    monkeypatch.setattr(memory, "in_use", lambda: 10 << 30)
    monkeypatch.setattr(memory, "target", lambda: 24 << 30)
    monkeypatch.setattr(memory, "budget", lambda: 130 << 30)
    held = [Held(5 << 30), Held(32 << 20)]  # the second is below SPILL_MIN_BYTES: it stays
    assert memory.unmovable_bytes() == (5 << 30)
    assert memory.fits_after_spill(19 << 30) and not memory.fits_after_spill((19 << 30) + 1)
    monkeypatch.setattr(memory, "budget", lambda: 20 << 30)  # the budget bounds it too
    assert not memory.fits_after_spill(16 << 30)
    del held


def test_the_eager_need_reads_captures_measure_until_a_run_measured_it():
    from kernelopt.worker.bundle_state import BundleState, eager_need

    meta = {"inputs": [{"shape": [1000, 250], "dtype": "float16"}],  # 500 kB
            "outputs": [{"shape": [1000, 250], "dtype": "float16"}]}
    state = BundleState(pathlib.Path("."), meta, "cuda", [], [])
    assert eager_need(state) == 1_000_000  # nothing known: its inputs and outputs
    meta["eager_call_bytes"] = 3_500_000  # float32 temporaries and the output, above the inputs
    assert eager_need(state) == 4_000_000
    state.run_needs[("eager", None)] = 2_600_000  # measured here: that, at least the inputs and outputs
    assert eager_need(state) == 2_600_000


def test_an_eager_run_past_the_target_runs_on_the_host_and_is_not_timed(monkeypatch):
    # The plan's decision forced (CPU mode has no target): the eager reference is made on host copies
    # of the model and inputs, kept (never made again), the baseline still compared with it; the
    # bench's side-by-side timing leaves eager out and says why.
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bench_ops, bundle_ops

    monkeypatch.setenv("KERNELOPT_DEVICE", "cpu")
    monkeypatch.setattr(bundle_state, "eager_on_device", lambda state: False)
    monkeypatch.setattr(bench_ops, "eager_on_device", lambda state: False)
    bundle = str(CORPUS / "gelu_scale")
    try:
        r = bundle_ops.run_baseline({"bundle": bundle})
        assert r["match"] and r["eager_device"] == "host", r
        state = bundle_state.get_bundle({"bundle": bundle})
        assert not state.references["eager"].recomputable()
        monkeypatch.setattr(bench_ops.timing, "time_interleaved",
                            lambda fns, reps, prepare, warmup=5, flush_l2=True: [{"median_ms": 1.0 + i} for i in range(len(fns))])
        monkeypatch.setattr(bench_ops.torch.cuda, "synchronize", lambda: None)
        monkeypatch.setattr(bench_ops, "_kernel_times", lambda fn, prep, reps, names, warmup=3: {"triton_names": sorted(names)})
        t = bench_ops.side_by_side(state, {"reps": 1})
        assert "device_ms" not in t["eager"] and "above what the memory plan" in t["eager"]["not_timed"], t
        assert t["compiled"]["device_ms"] == 1.0 and t["compiled"]["triton_names"], t
    finally:
        bench_ops.forget_bundles({})


def test_a_host_copy_is_read_back_before_it_is_trusted():
    # The spill's read-back: equal bytes pass, one changed byte is found; an
    # intact copy is kept as it is (no second copy).
    dev = torch.arange(1000, dtype=torch.int32).view(torch.uint8)
    host = dev.clone()
    assert memory.same_bytes(dev, host)
    assert memory._intact_host_copy(host, dev) is host and memory._copy_mismatches[0] == 0
    host[3001] ^= 1
    assert not memory.same_bytes(dev, host)
    fixed = memory._intact_host_copy(host, dev)  # copied again, then read back equal
    assert fixed is not host and torch.equal(fixed, dev) and memory._copy_mismatches[0] == 1
    memory._copy_mismatches[0] = 0


@pytest.mark.parametrize("nbytes", [8 * 1000, 8 * 1000 + 3])  # words, and a tail that is not one
def test_same_bytes_finds_one_changed_byte_anywhere(monkeypatch, nbytes):
    # Compared in slices of 8-byte words where aligned (the slices made small here so that there are
    # several, the last one short): one changed byte is found in the first, a middle and the last slice.
    monkeypatch.setattr(memory, "_SAME_STEP", 1024)
    a = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=torch.Generator().manual_seed(nbytes))
    assert memory.same_bytes(a, a.clone())
    for at in (0, 4321, nbytes - 1):
        b = a.clone()
        b[at] ^= 16
        assert not memory.same_bytes(a, b), at
    assert not memory.same_bytes(a, a[:-1].clone())  # storages of another size


def test_a_reference_whose_host_copy_changed_is_not_intact(monkeypatch):
    # The fingerprints taken when its leaves moved to the host are worked again from the host copy;
    # one changed byte there makes the reference not intact (the baseline's is then made again).
    monkeypatch.setattr(memory, "on_gpu", lambda: True)
    out = {"y": torch.linspace(-2, 2, 4096), "n": torch.arange(10)}
    held = memory.HeldTree(out)
    assert held.intact(torch.device("cpu"))  # nothing moved: nothing to check
    leaves = held._leaves()
    held._spilled_prints = [(i, memory.fingerprint(t)) for i, t in enumerate(leaves) if t.numel() > 100]
    assert held.intact(torch.device("cpu"))
    out["y"].view(torch.uint8)[777] ^= 4
    assert not held.intact(torch.device("cpu"))


def test_a_baseline_reference_that_changed_on_the_host_is_made_again(monkeypatch):
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bench_ops, bundle_ops

    monkeypatch.setenv("KERNELOPT_DEVICE", "cpu")
    bundle = str(CORPUS / "gelu_scale")
    try:
        bundle_ops.run_baseline({"bundle": bundle})
        state = bundle_state.get_bundle({"bundle": bundle})
        first = state.references["baseline"]
        want = bundle_state.reference(state, "baseline").clone()
        monkeypatch.setattr(memory.HeldTree, "intact", lambda self, compute=None: self is not first)
        before = memory._copy_mismatches[0]
        again = bundle_state.reference(state, "baseline")
        assert state.references["baseline"] is not first and memory._copy_mismatches[0] == before + 1
        assert torch.equal(again, want)  # the baseline modules' run made again
    finally:
        memory._copy_mismatches[0] = 0
        bench_ops.forget_bundles({})


@gpu_tier
def test_on_the_gpu_a_spilled_transposed_reference_reads_as_it_was():
    # The layout of the reference that once read 0.96 away from a fresh run (fp16, transposed, above
    # HOST_REFERENCE_BYTES): spilled to pinned host memory (where a spilled reference stays: readers
    # compare from there) it is intact, compares equal to the device original in storage-order
    # slices (host against device) and byte for byte; one changed element on the host is found.
    g = torch.Generator(device="cuda").manual_seed(41)
    x = torch.randn(2053, 131071, device="cuda", dtype=torch.float16, generator=g).t()
    want = x.clone(memory_format=torch.preserve_format)
    assert want.stride() == x.stride() and x.untyped_storage().nbytes() >= memory.HOST_REFERENCE_BYTES
    held = memory.HeldTree({"y": x})
    del x
    assert held.spill() > 0 and held.on_host and held._spilled_prints
    host = held.get()["y"]
    assert host.device.type == "cpu" and host.stride() == want.stride() and host.is_pinned()
    assert held.intact()
    r = cmp.compare_tensor(host, want)
    assert r["ok"] and r["max_abs"] == 0.0 and r["mismatched"] == 0, r
    assert torch.equal(host.cuda(), want)
    memory.flat_view(host)[12345] += 1  # the spilled storage in storage order: one element changed
    del host
    assert not held.intact()
    r = cmp.compare_tensor(held.get()["y"], want)
    assert not r["ok"] and r["mismatched"] == 1, r


def test_a_regions_recorded_inputs_keep_their_records_on_the_device(monkeypatch):
    # The records a region's G2 reads its inputs from come back to the device together and are kept
    # there for the request: one spilled under it would free nothing (the inputs hold its tensors).
    from kernelopt.worker.ops import region_ops

    with _baseline_state(monkeypatch, "group_norm") as state:
        recs = state.launches[:2]
        assert len({r.kernel for r in recs}) == 2
        req = dict(bundle=str(CORPUS / "group_norm"), graph=0, bindings=[{"name": f"in{i}", "kernel": r.kernel, "launch": r.index, "arg": 0}
                                              for i, r in enumerate(recs)])
        calls = []
        monkeypatch.setattr(memory, "reserve", lambda need, stage, keep=(): calls.append((stage, set(map(id, keep)))))
        for r in recs:
            r.on_host = True  # as if spilled (in CPU mode the host is where they already are)
        inputs = region_ops._inputs(state, req)
        assert [inputs[f"in{i}"] is r.args[0] for i, r in enumerate(recs)] == [True, True]
        assert len(calls) == 2 and all(keep == {id(r) for r in recs} for _, keep in calls), calls
        assert not any(r.on_host for r in recs)
        assert region_ops._bound_records(state, dict(req, seed=3)) == ()  # a seed's draws are its own


def test_a_float_comparison_counts_the_elements_outside_tolerance():
    want = torch.randn(300, 7, generator=torch.Generator().manual_seed(3))
    got = want.clone()
    got[3, 2] += 1.0
    got[299, 6] -= 2.0
    r = cmp.compare_tensor(got, want)
    assert not r["ok"] and r["mismatched"] == 2 and r["max_abs"] >= 2.0
    assert cmp.compare_tensor(want.clone(), want)["mismatched"] == 0


def test_the_flush_buffer_is_twice_the_gpus_l2(monkeypatch):
    # Sized from the device (at least 64 MiB); without one, the old fixed 256 MiB.
    from types import SimpleNamespace

    from kernelopt.worker.measure import timing

    monkeypatch.setattr(timing, "_flush_size", None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: SimpleNamespace(L2_cache_size=50 << 20))
    assert timing.flush_bytes() == 100 << 20
    # The soft target's fixed headroom follows the flush buffer: an H100's 100 MiB and the slices' 64 MiB,
    # so a 100 MiB problem's target is 264 MiB (with a fixed 320 MiB, its jobs peaked at 4.0x).
    assert memory.fixed_headroom() == (100 << 20) + memory.SLICE_HEADROOM == 164 << 20
    memory.set_budget(100 << 30)
    try:
        memory.set_compiled_peak(100 << 20)
        assert memory.target() == 264 << 20
    finally:
        memory.set_compiled_peak(None)
        memory.set_budget(None)
    monkeypatch.setattr(timing, "_flush_size", None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: SimpleNamespace(L2_cache_size=4 << 20))
    assert timing.flush_bytes() == 64 << 20
    monkeypatch.setattr(timing, "_flush_size", None)

    def no_device(i):
        raise RuntimeError("no CUDA device")

    monkeypatch.setattr(torch.cuda, "get_device_properties", no_device)
    assert timing.flush_bytes() == timing.DEFAULT_FLUSH_BYTES
    monkeypatch.setattr(timing, "_flush_size", None)


def test_timing_shares_the_records_read_only_inputs_when_copies_do_not_fit(monkeypatch):
    # Screening and G4 time on copies of every argument while they fit under the soft target; else
    # the inputs Inductor names in_ptr* are the record's own, fingerprinted, and a run that writes one
    # is caught (a 100 MB problem's screening held the record, a copy and the flush buffer: 3.0x).
    from kernelopt.worker.measure.launches import LaunchRecord
    from kernelopt.worker.ops import gpu_ops

    rec = LaunchRecord(0, "k", 0, [torch.randn(64), torch.zeros(64), 5])
    monkeypatch.setattr(gpu_ops, "read_only_args", lambda state, graph, var: {0})
    monkeypatch.setattr(memory, "fits_now", lambda need: True)
    args, shared = gpu_ops.timing_args(None, rec, "timing a kernel")
    assert shared == {} and args[0] is not rec.args[0] and torch.equal(args[0], rec.args[0])

    monkeypatch.setattr(memory, "fits_now", lambda need: False)
    args, shared = gpu_ops.timing_args(None, rec, "timing a kernel")
    assert args[0] is rec.args[0] and args[1] is not rec.args[1] and args[2] == 5
    assert list(shared) == [0] and memory.changed_since(rec.args, shared) == []
    prepare = gpu_ops.restore_and_poison(args, rec, poisoned=(1,))
    kept = rec.args[0].clone()
    args[1].fill_(3)
    prepare()  # the shared input is not copied onto itself; the output is poisoned
    assert torch.isnan(args[1]).all() and torch.equal(rec.args[0], kept)
    args[0][17] += 1.0  # a run that writes what the kernel only reads
    assert memory.changed_since(rec.args, shared) == [0]


def test_bounded_parts_of_a_padded_buffer_cover_it_once_in_small_views():
    # A GPU-padded buffer (rows of 7 in a stride of 8) is not one dense span: the garbage fill and the
    # host upcast slice it along its dimensions instead of drawing or converting it whole (a 2 GB padded
    # bf16 buffer's whole float32 draw put a reversed scan's G2 at 3.0x torch.compile's peak).
    from kernelopt.worker.measure import poison

    base = torch.zeros(5, 6, 8)
    t = base[:, :, :7]
    assert memory.flat_view(t) is None
    marks = torch.zeros_like(t)
    for (p, m) in memory.bounded_parts((t, marks), 10):
        assert p.numel() <= 10 and p.shape == m.shape
        m.add_(1)
    assert torch.equal(marks, torch.ones_like(t))  # every element once
    poison.poison(t, "garbage", seed=3)
    assert torch.isfinite(t).all() and t.abs().sum() > 0 and len(torch.unique(t)) > 100
    assert (base[:, :, 7] == 0).all()  # the padding is left alone
    again = torch.zeros(5, 6, 8)[:, :, :7]
    poison.poison(again, "garbage", seed=3)
    assert torch.equal(again, t)  # the same layout gets the same fill: elements neither run writes compare equal
    up = memory.upcast_in_slices(t.to(torch.bfloat16), "cpu", torch.float64, slice_elements=10)
    assert up.dtype == torch.float64 and torch.equal(up, t.to(torch.bfloat16).to(torch.float64))


def test_a_float64_reference_that_would_run_on_the_host_is_left_to_g3(monkeypatch):
    # The baseline stage asks for the float64 model only for the report; where its float64 need passes the soft
    # target it would run on the host's CPUs (15.6 s of a 60 s budget for a 3.7 GB cumsum, H100): with
    # `defer_host` it is not made, and the reply says why. Without `defer_host`, and once the plan has room,
    # it is made as before, with the same comparison.
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bundle_ops

    with _baseline_state(monkeypatch, "softmax_lastdim") as state:
        assert bundle_state.fp64_host_need(state) is None  # CPU mode: never the host's "elsewhere"
        made = []
        monkeypatch.setattr(bundle_state, "_fp64_reference",
                            (lambda real: lambda s: (made.append(1), real(s))[1])(bundle_state._fp64_reference))
        monkeypatch.setattr(state, "device", "cuda")
        monkeypatch.setattr(memory, "fits_after_spill", lambda need: False)
        need = bundle_state.fp64_host_need(state)
        assert need is not None and need >= bundle_state.run_bytes(state.meta, torch.float64)
        r = bundle_ops.run_fp64({"bundle": state.dir, "defer_host": True})
        assert "baseline_vs_fp64" not in r and r["need_bytes"] == need
        assert "host's CPUs" in r["deferred"] and "fp64" not in state.references and not made
        monkeypatch.setattr(state, "device", "cpu")
        r = bundle_ops.run_fp64({"bundle": state.dir, "defer_host": True})
        assert "deferred" not in r and r["baseline_vs_fp64"]["outputs"] and made == [1]
        monkeypatch.setattr(state, "device", "cuda")
        assert bundle_state.fp64_host_need(state) is None  # made now: nothing left to defer
