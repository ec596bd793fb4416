"""`kernelopt bench` in CPU mode (docs/bench.md): a tiny suite of corpus bundles
(copied into a temporary suite, plus one bundle whose problem raises on import
and one problem file, which CPU mode captures with Triton kernels for CPU tensors) runs through the suite
runner; the table and report.md/html/results.jsonl come out; a run killed with
SIGKILL after its first problem resumes without redoing it and ends with the
same table; two shards merged give the unsharded table.

All runs share one results database, so the search cache makes every run after
the first cheap (the file stays within its CPU-time budget).
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from conftest import gpu_tier  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
PROBLEMS = ["level1/gelu_scale", "level1/matmul", "level1/softmax_lastdim.py", "level2/broken", "level2/softmax_lastdim"]


def bench(kernelopt_bin, *args, timeout=600):
    return subprocess.run([kernelopt_bin, "bench", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def table_lines(md: str) -> list[str]:
    """The level table and the problem rows of report.md (every table line but the "Where the time
    went" section's: seconds differ from one run of the same problems to the next)."""
    head, _, rest = md.partition("## Where the time went")
    rest = rest[rest.find("## Problems"):] if rest else ""
    return [line for line in (head + rest).splitlines() if line.startswith("|")]


def bench_records(db: Path, run_dir: Path) -> int:
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM records WHERE kind = 'bench' AND key LIKE ?", (run_id + "|%",)).fetchone()[0]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    s = root / "suite"
    (s / "level1").mkdir(parents=True)
    (s / "level2").mkdir()
    for name, level in [("gelu_scale", 1), ("matmul", 1), ("softmax_lastdim", 2)]:
        shutil.copytree(CORPUS / name, s / f"level{level}" / name)
    # A bundle whose problem fails to import: the worker cannot rebuild its model.
    shutil.copytree(CORPUS / "matmul", s / "level2" / "broken")
    with open(s / "level2" / "broken" / "problem.py", "a") as f:
        f.write('\nraise RuntimeError("this problem is broken on purpose")\n')
    shutil.copy(ROOT / "examples/problems/softmax_lastdim.py", s / "level1" / "softmax_lastdim.py")
    (s / "level1" / "README.txt").write_text("not a problem\n")
    return {"suite": s, "db": root / "results.db", "root": root}


@pytest.fixture(scope="module")
def full_run(kernelopt_bin, suite):
    out = suite["root"] / "full"
    r = bench(kernelopt_bin, suite["suite"], "--device", "cpu", "--out", out, "--db", suite["db"],
              "--budget-per-problem", 60)
    assert r.returncode == 0, r.stderr
    return {"out": out, "result": r}


def test_bench_writes_the_table_and_reports(full_run, suite):
    out, r = full_run["out"], full_run["result"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by = {row["problem"]: row for row in rows}
    assert sorted(by) == PROBLEMS
    assert by["level1/gelu_scale"]["status"] == "optimized" and by["level1/gelu_scale"]["correct"] is True
    assert by["level1/gelu_scale"]["accepted_count"] == 1 and by["level1/gelu_scale"]["kernels"] == 1
    assert by["level1/matmul"]["status"] == "fallback" and "no Triton kernels" in by["level1/matmul"]["reason"]
    assert by["level2/softmax_lastdim"]["status"] == "optimized" and by["level2/softmax_lastdim"]["matches_eager"]
    # The check's rule and numbers travel with the row (a fallback's own modules: within tolerance).
    check = by["level1/gelu_scale"]["check"]
    assert check["rule"] == "within tolerance of the baseline" and check["vs_baseline_max_rel"] <= 1e-4, check
    # CPU mode: nothing is timed and no speedup is claimed.
    assert all(row["measured"] is False and row["speedup"] is None and row["compiled"] is None for row in rows)
    # The optimized problem's result directory is a loadable bundle with the replaced kernel.
    result = out / by["level1/gelu_scale"]["result_dir"]
    assert (result / "report.json").is_file()
    assert (result / "module_0.py").read_text() != (result / "baseline/module_0.py").read_text()

    md = (out / "report.md").read_text()
    assert "Performance not measured (CPU mode)" in md
    level1 = next(line for line in table_lines(md) if line.startswith("| 1 |"))
    assert level1.startswith("| 1 | 3 | 2 | 1 | 0 | 100% | not measured |"), level1
    assert "| all | 5 | 3 | 1 | 1 | 80% |" in md
    # stdout: the compact table, every line within 120 columns, one line per problem, the reports named.
    lines = [line for line in r.stdout.splitlines() if str(out) not in line]  # a path is as long as the user made it
    assert lines and max(len(line) for line in lines) <= 120, max(lines, key=len)
    assert any(re.match(r"1\s+3\s+2\s+1\s+0\s+100%\s+not measured", line) for line in lines), r.stdout
    assert any(re.match(r"all\s+5\s+3\s+1\s+1\s+80%", line) for line in lines), r.stdout
    for p in PROBLEMS:
        assert any(line.startswith(p + " ") for line in lines), (p, r.stdout)
    assert f"report.md and report.html in {out}" in r.stdout
    # Where the time went: the optimized and fallback problems carry per-stage seconds.
    timed = md[md.index("## Where the time went"):md.index("## Problems")]
    assert "| 1 | 3 |" in timed and "| 2 | 1 |" in timed, timed

    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and 'data-performance-measured="false"' in html
    assert 'class="sortable compact" id="problems"' in html and "level2/broken" in html
    assert "http://" not in html and "https://" not in html and " src=" not in html  # self-contained


def test_a_broken_problem_is_a_row_with_its_reason(full_run):
    rows = {json.loads(line)["problem"]: json.loads(line) for line in (full_run["out"] / "results.jsonl").read_text().splitlines()}
    broken = rows["level2/broken"]
    assert broken["status"] == "error" and broken["correct"] is None
    assert "broken on purpose" in broken["reason"]
    # A problem file in CPU mode: captured with Triton kernels for CPU tensors (the interpreter runs them).
    py = rows["level1/softmax_lastdim.py"]
    assert py["status"] in ("optimized", "fallback") and py["correct"] is True, py
    # The run went on past the broken one: every later problem has its row.
    assert rows["level2/softmax_lastdim"]["status"] == "optimized"


def _children(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def test_a_killed_run_resumes_where_it_stopped(kernelopt_bin, suite, full_run):
    out = suite["root"] / "killed"
    cmd = [kernelopt_bin, "bench", str(suite["suite"]), "--device", "cpu", "--out", str(out), "--db", str(suite["db"]),
           "--budget-per-problem", "60"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    finished = 0
    try:
        for line in p.stderr:
            if line.startswith("[bench 1/5] level1/gelu_scale: optimized"):
                finished = 1
                break
    finally:
        kids = _children(p.pid)
        p.send_signal(signal.SIGKILL)  # as a crash or an OOM killer would
        p.wait()
        for k in kids:  # the workers it started
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert finished == 1
    done_before = bench_records(suite["db"], out)
    assert 1 <= done_before < len(PROBLEMS)
    assert not (out / "results.jsonl").read_text() == ""  # the partial report shows what was finished

    r = bench(kernelopt_bin, suite["suite"], "--device", "cpu", "--out", out, "--db", suite["db"],
              "--budget-per-problem", 60)
    assert r.returncode == 0, r.stderr
    resumed = [line for line in r.stderr.splitlines() if "done in an earlier run (resumed)" in line]
    ran = [line for line in r.stderr.splitlines() if ": running on" in line]
    assert len(resumed) == done_before and "level1/gelu_scale" in resumed[0]
    assert len(ran) == len(PROBLEMS) - done_before and not any("level1/gelu_scale" in line for line in ran)
    assert bench_records(suite["db"], out) == len(PROBLEMS)  # nothing recorded twice
    assert table_lines((out / "report.md").read_text()) == table_lines((full_run["out"] / "report.md").read_text())

    # Rerun elsewhere (another, empty database): the rows come back from results.jsonl; nothing runs.
    r = bench(kernelopt_bin, suite["suite"], "--device", "cpu", "--out", out, "--db", suite["root"] / "other.db",
              "--budget-per-problem", 60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("(resumed)") == len(PROBLEMS) and ": running on" not in r.stderr
    assert table_lines((out / "report.md").read_text()) == table_lines((full_run["out"] / "report.md").read_text())

    # The run directory holds rows made under its settings only.
    r = bench(kernelopt_bin, suite["suite"], "--device", "cpu", "--out", out, "--db", suite["db"],
              "--budget-per-problem", 5)
    assert r.returncode == 2 and "other settings" in r.stderr and "--fresh" in r.stderr
    # The field that differs, with both values, and not the whole settings object (tolerances and all).
    assert "budget_s 60 there, 5 here" in r.stderr and "tolerances" not in r.stderr, r.stderr
    assert sum(line.startswith("kernelopt: error:") for line in r.stderr.splitlines()) == 1, r.stderr


def test_two_shards_merged_give_the_unsharded_table(kernelopt_bin, suite, full_run):
    root = suite["root"]
    for i in (0, 1):
        r = bench(kernelopt_bin, suite["suite"], "--device", "cpu", "--out", root / f"shard{i}", "--db", suite["db"],
                  "--budget-per-problem", 60, "--shard", f"{i}/2")
        assert r.returncode == 0, r.stderr
    n0 = len((root / "shard0/results.jsonl").read_text().splitlines())
    n1 = len((root / "shard1/results.jsonl").read_text().splitlines())
    assert (n0, n1) == (3, 2)  # round-robin over the sorted list
    r = bench(kernelopt_bin, "merge", root / "shard0", root / "shard1", "--out", root / "merged")
    assert r.returncode == 0, r.stderr
    assert table_lines((root / "merged/report.md").read_text()) == table_lines((full_run["out"] / "report.md").read_text())
    assert "merged 5 row(s) from 2" in r.stdout

    # A shard given twice would count its problems twice: refused, naming the fix.
    r = bench(kernelopt_bin, "merge", root / "shard0", root / "shard0", "--out", root / "bad")
    assert r.returncode == 2 and "merge each shard once" in r.stderr and "--later-wins" in r.stderr

    # A partial re-run over the whole run: --later-wins keeps the re-run's rows, each problem once.
    rerun = root / "rerun"
    rerun.mkdir()
    (rerun / "run.json").write_text((root / "shard1/run.json").read_text())
    first = json.loads((root / "shard1/results.jsonl").read_text().splitlines()[0])
    first["speedup"], first["reason"] = 1.0, "re-run"
    (rerun / "results.jsonl").write_text(json.dumps(first) + "\n")
    r = bench(kernelopt_bin, "merge", full_run["out"], rerun, "--later-wins", "--out", root / "later")
    assert r.returncode == 0, r.stderr
    assert f"merged {len(PROBLEMS)} row(s) from 2 director(ies), 1 replaced by a later run's" in r.stdout
    merged = [json.loads(line) for line in (root / "later/results.jsonl").read_text().splitlines()]
    assert len(merged) == len(PROBLEMS) and len({m["problem"] for m in merged}) == len(PROBLEMS)
    assert next(m for m in merged if m["problem"] == first["problem"])["reason"] == "re-run"
    assert json.loads((root / "later/run.json").read_text())["rows_replaced"] == 1


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/suite"], "not a directory"),
    (["SUITE", "--shard", "2/2"], "0 <= I < N"),
    (["SUITE", "--levels", "x"], "--levels"),
    (["SUITE", "--levels", "3"], "no problems in level3/"),
])
def test_bad_input_is_one_line_naming_the_fix(kernelopt_bin, suite, tmp_path, args, message):
    args = [str(suite["suite"]) if a == "SUITE" else a for a in args]
    r = bench(kernelopt_bin, *args, "--device", "cpu", "--out", tmp_path / "out", "--db", tmp_path / "db", timeout=60)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and r.stderr.count("\n") <= 2, r.stderr


def test_kernel_files_are_captured_ahead_and_their_jobs_start_from_the_bundles(kernelopt_bin, tmp_path, monkeypatch):
    """--capture-jobs: problems are captured before the first job, several at a time; each job starts
    from its bundle (its load stage is the bundle read, the capture's time is kept as capture_ahead);
    a model file is captured ahead too (Triton kernels for CPU tensors); bundles already captured are
    not captured again; --capture-jobs 0 captures inside each job, as correct as the jobs started from bundles."""
    s = tmp_path / "suite" / "level1"
    s.mkdir(parents=True)
    for f in ("examples/triton/softmax.py", "examples/triton/layer_norm.py", "examples/problems/softmax_lastdim.py"):
        shutil.copy(ROOT / f, s)
    db = tmp_path / "results.db"

    def run(out, *extra):
        r = bench(kernelopt_bin, s.parent, "--device", "cpu", "--out", out, "--db", db, "--budget-per-problem", 10,
                  *extra)
        assert r.returncode == 0, r.stderr
        rows = {json.loads(x)["name"]: json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()}
        return r.stderr, rows

    err, ahead = run(tmp_path / "ahead", "--capture-jobs", "2")
    assert "capturing 3 problem(s) ahead, 2 at a time" in err and "3 of 3 problem(s) captured ahead" in err, err
    for name in ("softmax", "layer_norm", "softmax_lastdim"):
        st = ahead[name]["stages"]
        assert ahead[name]["status"] in ("optimized", "fallback") and ahead[name]["correct"] is True, ahead[name]
        assert st["capture_ahead"] > 0 and st["load"] < 0.5 * st["capture_ahead"], st
        bundle = tmp_path / "ahead" / "problems" / "level1" / name / "bundle"
        assert (bundle / "problem.py").read_bytes() == (s / f"{name}.py").read_bytes()
    meta = json.loads((tmp_path / "ahead" / "problems" / "level1" / "softmax_lastdim" / "bundle" / "meta.json").read_text())
    assert meta["cpu_kernels"] == "triton"

    err, again = run(tmp_path / "ahead", "--capture-jobs", "2", "--fresh")
    assert "[bench] capturing" not in err, err  # the bundles are there: nothing to capture
    assert all(r["stages"] is None or "capture_ahead" in r["stages"] for r in again.values())

    monkeypatch.setenv("KERNELOPT_CAPTURE_IN_WORKER", "0")  # each job's own capture process
    err, inside = run(tmp_path / "inside", "--capture-jobs", "0", "--verbose")
    assert "[bench] capturing" not in err and err.count("capture process:") == 3, err
    for name in ("softmax", "layer_norm"):
        assert "capture_ahead" not in inside[name]["stages"] and inside[name]["stages"]["load"] > 1.0
        # optimized or fallback alike: on CPU the performance gate's verdict rests on interpreter timings,
        # and the capture inside the job is spent from the same 10 s budget, so it may end with fewer tries
        assert inside[name]["status"] in ("optimized", "fallback") and inside[name]["correct"] is True, inside[name]


@gpu_tier
def test_bench_on_the_gpu_measures_and_names_the_gpu(kernelopt_bin, tmp_path):
    """One problem file through the suite runner on the GPU: captured, optimized, timed side by side,
    and its row names the GPU (read from the worker's hello, a step that once read freed memory)."""
    s = tmp_path / "suite" / "level1"
    s.mkdir(parents=True)
    shutil.copy(ROOT / "examples/problems/softmax_lastdim.py", s / "softmax_lastdim.py")
    r = bench(kernelopt_bin, tmp_path / "suite", "--out", tmp_path / "run", "--db", tmp_path / "results.db",
              "--budget-per-problem", 10, "--reps", 10)
    assert r.returncode == 0, r.stderr
    row = json.loads((tmp_path / "run" / "results.jsonl").read_text().splitlines()[0])
    assert row["status"] in ("optimized", "fallback") and row["correct"] is True, row
    assert row["measured"] is True and row["compiled"]["device_ms"] > 0 and row["optimized"]["device_ms"] > 0
    assert isinstance(row["gpu"], str) and "NVIDIA" in row["gpu"], row["gpu"]


def test_worker_bench_ops(monkeypatch):
    """bench_times answers "not measured" in CPU mode; its side-by-side plumbing (one compiled model for
    torch.compile and optimized, eager apart) runs here with a stand-in for the CUDA timer; forget_bundles
    empties the worker."""
    from kernelopt.worker import bundle_state
    from kernelopt.worker.ops import bench_ops

    monkeypatch.setenv("KERNELOPT_DEVICE", "cpu")
    bundle = str(CORPUS / "gelu_scale")
    r = bench_ops.bench_times({"bundle": bundle})
    assert r == {"measured": False, "reason": "CPU mode: times are not measured"}

    state = bundle_state.get_bundle({"bundle": bundle})
    seen = {}

    def fake_interleaved(fns, reps, prepare, warmup=5, flush_l2=True):
        seen.setdefault("calls", []).append((len(fns), reps, warmup))
        seen.setdefault("flushed", []).append(flush_l2)
        if len(fns) == 3:
            seen["same_path"] = fns[1] is fns[2]  # torch.compile and optimized: one compiled callable
        outs = []
        for fn, prep in zip(fns, prepare):
            prep()
            outs.append(fn())
        seen.setdefault("outs", outs)
        return [{"median_ms": float(i + 1)} for i in range(len(fns))]

    monkeypatch.setattr(bench_ops.timing, "time_interleaved", fake_interleaved)
    monkeypatch.setattr(bench_ops.torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(bench_ops, "_kernel_times", lambda fn, prep, reps, names, warmup=3: {"kernel_ms": 0.5, "triton_names": sorted(names)})
    changed = state.sources[0] + "\n# a changed module\n"
    r = bench_ops.side_by_side(state, {"sources": [changed], "reps": 1})
    assert seen["same_path"] and set(r) >= {"eager", "compiled", "optimized"}
    assert [r[k]["device_ms"] for k in ("eager", "compiled", "optimized")] == [1.0, 2.0, 3.0]
    assert r["compiled"]["triton_names"] == ["triton_poi_fused_add_gelu_mul_0"] and r["eager"]["triton_names"] == []
    eager, compiled, optimized = seen["outs"]
    assert bench_ops.torch.allclose(compiled, eager, atol=1e-4) and bench_ops.torch.equal(compiled, optimized)
    r = bench_ops.side_by_side(state, {"sources": [state.sources[0]], "reps": 1})
    assert "optimized" not in r  # the baseline's own text: nothing to compare
    # An eager model of seconds a call is timed apart with fewer calls, warmed up once; the other two stay
    # interleaved, with their full warm-up.
    monkeypatch.setattr(bench_ops, "_eager_reps", lambda eager, reps: 3)
    seen["calls"] = []
    r = bench_ops.side_by_side(state, {"sources": [changed], "reps": 20})
    assert seen["calls"] == [(1, 3, 1), (2, 20, 5)] and r["eager"]["reps"] == 3 and "reps" not in r["compiled"], r
    assert seen["flushed"][-2:] == [True, True] and "l2" not in r["eager"]
    # An eager run that with the L2 flush buffer beside it would pass the memory plan's soft target (a small BCE's
    # fp16 intermediate: 3.15x torch.compile's peak) is timed apart without the flush, and says so; the other two
    # keep theirs.
    monkeypatch.setattr(bench_ops, "_eager_reps", lambda eager, reps: reps)
    flush = bench_ops.timing.flush_bytes()
    monkeypatch.setattr(bench_ops.memory, "fits_after_spill",
                        lambda need: need < bench_ops.eager_need(state) + flush)
    seen["calls"], seen["flushed"] = [], []
    r = bench_ops.side_by_side(state, {"sources": [changed], "reps": 20})
    assert seen["calls"] == [(1, 20, 5), (2, 20, 5)] and seen["flushed"] == [False, True], seen
    assert "not flushed" in r["eager"]["l2"] and "l2" not in r["compiled"] and "l2" not in r["optimized"], r

    assert bench_ops.forget_bundles({})["forgotten"] >= 1 and not bundle_state.loaded_bundles


def test_kernel_sums_split_triton_from_vendor():
    from types import SimpleNamespace as NS

    from kernelopt.worker.ops import bench_ops

    cuda, cpu = bench_ops.torch.autograd.DeviceType.CUDA, bench_ops.torch.autograd.DeviceType.CPU

    def evt(name, us, dev=cuda):
        return NS(name=name, device_type=dev, time_range=NS(elapsed_us=lambda: us))

    events = [evt("triton_poi_0", 30), evt("triton_poi_0", 50), evt("sm90_xmma_gemm", 120), evt("aten::mm", 999, cpu)]
    r = bench_ops.sum_kernels(events, 2, {"triton_poi_0"})
    assert r == pytest.approx({"kernel_ms": 0.1, "triton_ms": 0.04, "vendor_ms": 0.06, "kernels_per_call": 1.5})


def test_a_problem_captured_in_the_pools_worker_is_optimized(kernelopt_bin, tmp_path, monkeypatch):
    """By default (KERNELOPT_CAPTURE_IN_WORKER unset) the job's capture is the pool worker's `capture`
    request, not a process of its own; the bundle is the same kind (Triton kernels for the interpreter here), and a
    problem that fails to capture is an error row naming the capture's own error; the worker goes on."""
    s = tmp_path / "suite" / "level1"
    s.mkdir(parents=True)
    shutil.copy(ROOT / "examples/problems/softmax_lastdim.py", s / "a_softmax_lastdim.py")
    (s / "b_broken.py").write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                   "        return x.softmax(-1)\n\n\ndef get_inputs():\n"
                                   "    raise RuntimeError('no inputs on purpose')\n\n\ndef get_init_inputs():\n"
                                   "    return []\n")
    shutil.copy(ROOT / "examples/problems/softmax_lastdim.py", s / "c_softmax_lastdim.py")
    monkeypatch.delenv("KERNELOPT_CAPTURE_IN_WORKER", raising=False)
    r = bench(kernelopt_bin, tmp_path / "suite", "--device", "cpu", "--out", tmp_path / "run", "--db",
              tmp_path / "results.db", "--budget-per-problem", 30, "--verbose", "--capture-jobs", 0)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("captured in the worker") == 2 and "capture process" not in r.stderr, r.stderr[-3000:]
    rows = {json.loads(line)["problem"]: json.loads(line)
            for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()}
    for name in ("level1/a_softmax_lastdim.py", "level1/c_softmax_lastdim.py"):
        assert rows[name]["status"] in ("optimized", "fallback") and rows[name]["correct"] is True, rows[name]
    meta = json.loads((tmp_path / "run" / rows["level1/a_softmax_lastdim.py"]["result_dir"] / "bundle" / "meta.json")
                      .read_text())
    assert meta.get("cpu_kernels") == "triton" and meta["graphs"], meta
    broken = rows["level1/b_broken.py"]
    assert broken["status"] == "error" and "no inputs on purpose" in broken["reason"], broken
