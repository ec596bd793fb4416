"""Region fusion through `kernelopt optimize` in CPU mode (docs/optimize.md, "Regions"): on the
captured reverse_cumsum (a flipped scan kernel writing buf0, then a flip kernel reading it), the
built-in coder folds the flip into the scan's store; the fused region passes G1-G3 as a unit, is
chosen over the two kernels' own winners (nothing is timed on the CPU), and the stitched module —
one launch, no buf0 — passes the end-to-end correctness check and matches the eager model.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from test_optimize import result_vs_eager  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "corpus" / "reverse_cumsum"
FUSED = "triton_per_fused_cumsum_flip_0_poi_fused_flip_1"


def optimized(kernelopt_bin, tmp_path, bundle):
    """`kernelopt optimize BUNDLE --device cpu`: the result directory and its report.json."""
    out, db = tmp_path / "out", tmp_path / "results.db"
    cmd = [kernelopt_bin, "optimize", str(bundle), "--device", "cpu", "--budget", "600", "--seeds", "2",
           "--out", str(out), "--db", str(db)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "report.json").read_text())


def epilogue_fused(kernelopt_bin, tmp_path, bundle):
    """`optimize` on a one-region bundle whose epilogue fusion (buf0 folded away) passes G1-G3 and is chosen:
    the result directory and its module text."""
    out, report = optimized(kernelopt_bin, tmp_path, bundle)
    fusion = report["regions"][0]["fusion"]
    assert fusion["chosen"] == "r1", fusion
    (cand,) = fusion["candidates"]
    assert cand["origin"] == "fusion:epilogue" and cand["internal"] == ["buf0"]
    assert [g["status"] for g in cand["gates"]] == ["passed", "passed", "passed", "not_measured"]
    return out, (out / "module_0.py").read_text()


def test_the_flip_is_fused_into_the_scan_and_the_result_matches_eager(kernelopt_bin, tmp_path):
    out, report = optimized(kernelopt_bin, tmp_path, BUNDLE)

    (region,) = report["regions"]
    fusion = region["fusion"]
    assert fusion["tried"] and fusion["chosen"] == "r1", fusion
    (cand,) = fusion["candidates"]
    assert cand["origin"] == "fusion:epilogue" and cand["kernel"] == FUSED
    assert cand["internal"] == ["buf0"]
    assert [g["status"] for g in cand["gates"]] == ["passed", "passed", "passed", "not_measured"]
    assert report["summary"]["regions_fused"] == 1
    assert all(k["fused"] for k in report["kernels"])

    e2e = report["module"]["end_to_end"]
    assert e2e["status"] == "not_measured", e2e  # correct; the CPU times nothing
    assert e2e["evidence"]["correctness"]["vs_baseline_max_rel"] <= 1e-4

    module = (out / "module_0.py").read_text()
    assert f"{FUSED}.run(arg0_1, buf1, 64, 1024, stream=stream0)" in module
    assert "buf0" not in module and "triton_poi_fused_flip_1.run(" not in module
    assert "## Regions" in (out / "report.md").read_text()
    assert result_vs_eager(out)["match"]


def test_a_pointwise_producer_is_inlined_into_the_reductions_load(kernelopt_bin, tmp_path):
    """The prologue direction on a bundle written in Inductor's form (tests/python/data): a transposed bf16 input
    scaled in float32 (buf0), then summed over rows."""
    bundle = ROOT / "tests" / "python" / "data" / "transpose_scale_sum_inductor_form"
    out, report = optimized(kernelopt_bin, tmp_path, bundle)
    fusion = report["regions"][0]["fusion"]
    assert fusion["chosen"] == "r1", fusion
    (cand,) = fusion["candidates"]
    assert cand["origin"] == "fusion:prologue"
    assert [g["status"] for g in cand["gates"]] == ["passed", "passed", "passed", "not_measured"]
    assert any("epilogue" in d and "not pointwise" in d for d in fusion["declined"])
    assert report["module"]["end_to_end"]["status"] == "not_measured"
    module = (out / "module_0.py").read_text()
    assert f"{cand['kernel']}.run(arg0_1, buf1, 64, 1024, stream=stream0)" in module and "buf0" not in module
    assert result_vs_eager(out)["match"]


def _row_merge(kernelopt_bin, tmp_path, bundle, launch="arg2_1, arg0_1, arg1_1, buf3, "):
    out, report = optimized(kernelopt_bin, tmp_path, bundle)
    (region,) = report["regions"]
    fusion = region["fusion"]
    chosen = [c for c in fusion["candidates"] if c["id"] == fusion["chosen"]]
    assert len(chosen) == 1, fusion
    cand = chosen[0]
    assert cand["id"] == "r1"  # CPU mode: the first one to pass G1-G3
    assert cand["origin"] == "fusion:row_merge", cand
    assert sorted(cand["internal"]) == ["buf0", "buf1"]  # both statistics in one fused kernel
    assert [g["status"] for g in cand["gates"]] == ["passed", "passed", "passed", "not_measured"]
    assert report["summary"]["regions_fused"] == 1 and all(k["fused"] for k in report["kernels"])
    assert report["module"]["end_to_end"]["evidence"]["correctness"]["vs_baseline_max_rel"] <= 1e-4
    module = (out / "module_0.py").read_text()
    assert f"{cand['kernel']}.run({launch}" in module
    call = module[module.index("    def call(self, args):"):]
    assert "buf0" not in call and "buf1" not in call  # the statistics are never allocated
    assert result_vs_eager(out)["match"]
    return module, cand


def test_group_norms_statistics_and_normalize_merge_into_one_looped_kernel(kernelopt_bin, tmp_path):
    """The captured group_norm (Welford statistics in a looped reduction, then a pointwise normalize with a
    per-channel scale): one kernel; its rows of 2048 fit a program, so the first form is the single pass, which
    loads each row once."""
    module, cand = _row_merge(kernelopt_bin, tmp_path, ROOT / "corpus" / "group_norm")
    assert "single pass: each row read once, XBLOCK=1 R0_BLOCK=2048" in cand["description"], cand
    assert "@triton_heuristics.fixed_config(" in module


def test_short_rows_merge_into_one_persistent_kernel_that_reads_each_row_once(kernelopt_bin, tmp_path):
    """A group norm whose rows fit one block (Inductor's persistent form, tests/python/data): the normalize reuses
    the row the statistics loaded."""
    module, _ = _row_merge(kernelopt_bin, tmp_path, ROOT / "tests/python/data/group_norm_short_rows_inductor_form")
    assert "fuse_tmp0 = tmp0" in module


def test_column_statistics_merge_through_the_strided_anchor(kernelopt_bin, tmp_path):
    """Batch statistics over the rows of a 2-D tensor (tests/python/data, Inductor's form): the producer reduces
    columns (x0 + 160*r0_1), the consumer normalizes each element by its column's statistics."""
    module, _ = _row_merge(kernelopt_bin, tmp_path, ROOT / "tests/python/data/batch_stats_columns_inductor_form",
                           launch="arg0_1, arg1_1, arg2_1, buf2, 160, 96, stream=stream0)")
    assert "fuse_xindex = x0 + 160*r0_1" in module


def test_a_flip_of_padded_half_precision_rows_folds_into_the_scan(kernelopt_bin, tmp_path):
    """A float16 reversed cumsum in Inductor's form (tests/python/data): the scan writes rows of 1100 held
    1152 apart (Inductor's padded strides), the flip reads them back converted to float32. The epilogue
    inverts the flip by the buffer's strides and keeps the load's conversion; G1-G3 pass on the region and
    the stitched module matches eager."""
    bundle = ROOT / "tests" / "python" / "data" / "cumsum_rev_padded_rows_inductor_form"
    out, module = epilogue_fused(kernelopt_bin, tmp_path, bundle)
    assert "fuse_x0 = (1099 - (fuse_a % 1152))" in module and "fuse_x1 = (fuse_a // 1152)" in module
    assert "fuse_tmp0 = (tmp8).to(tl.float16).to(tl.float32)" in module
    assert "buf0" not in module.split("def call(")[1]
    assert result_vs_eager(out)["match"]


@pytest.mark.parametrize("name, want", [
    # Rows of 1061 bf16 held 1088 apart, the two outer dims one after another in memory (a fresh draw's reversed
    # cumprod over dim 2 of a transposed 197 x 2448 x 2161 tensor had this layout and kept its two kernels).
    ("cumprod_rev_padded_rows_cpu_capture", ["fuse_x0 = (1060 - (fuse_a % 1088))", "fuse_x1 = (fuse_a // 1088)"]),
    # Rows of 431 fp16 unpadded, planes of 40 rows 17280 apart, not a multiple of 431: the planes' share first.
    ("cumsum_rev_padded_planes_cpu_capture", ["fuse_x0 = (430 - ((fuse_a % 17280) % 431))",
                                              "fuse_x1 = ((fuse_a % 17280) // 431)", "fuse_x2 = (fuse_a // 17280)"]),
])
def test_a_flip_of_a_buffer_padded_as_on_a_gpu_folds_into_the_scan(kernelopt_bin, tmp_path, name, want):
    """Reversed scans captured on the CPU with Triton kernels and Inductor's GPU padding (strides above 1024
    elements aligned to 128 bytes): the epilogue inverts the flip by the padded buffer's own layout, G1-G3 pass
    on the region and the stitched module matches eager."""
    out, module = epilogue_fused(kernelopt_bin, tmp_path, ROOT / "tests" / "python" / "data" / name)
    for line in want:
        assert line in module, line
    assert "buf0" not in module.split("def call(")[1]
    assert result_vs_eager(out)["match"]


def test_a_tiled_consumer_reading_the_scans_input_again_folds_into_the_scan(kernelopt_bin, tmp_path):
    """An exclusive cumsum over dim 0 of a transposed 4-D tensor, captured here: the scan writes buf0 in the
    input's layout; a 2-D tiled kernel (YBLOCK beside XBLOCK) loads buf0 and the input at the same index and
    stores `cumsum - x` in the output's layout. The epilogue reads the tiled consumer through one virtual index,
    loads the input again through the producer's own parameter, and stores at the consumer's transposed index;
    G1-G3 pass on the region and the stitched module matches eager (the same fusion with the second load one
    element off fails G2: engine/tests/region_cascade_test.cpp)."""
    bundle = ROOT / "tests" / "python" / "data" / "cumsum_excl_transposed_cpu_capture"
    out, module = epilogue_fused(kernelopt_bin, tmp_path, bundle)
    second = "fuse_tmp1 = tl.load(in_ptr0 + (1 * fuse_x2 + 16 * fuse_y0 + 336 * fuse_y1), r0_mask & xmask)"
    assert second in module
    assert "tl.store(out_ptr0 + (21 * fuse_x2 + 1 * fuse_y0 + 336 * fuse_y1), fuse_tmp2, r0_mask & xmask)" in module
    assert "buf0" not in module.split("def call(")[1]
    assert result_vs_eager(out)["match"]



@pytest.mark.serial  # a wall-clock bound: run alone (test.sh)
def test_a_region_cascade_that_does_not_fit_the_budget_is_not_started(kernelopt_bin, tmp_path):
    """With a budget of 8 s the kernels' own search leaves less than a region cascade is estimated to take (the
    sum of its kernels' cascades): the region is not run — in CPU mode one took 33 s with 7 s left, after which
    the end-to-end gate found no time and the job's accepted kernels were all dropped — and the job ends near its
    budget."""
    bundle = ROOT / "tests" / "python" / "data" / "cumsum_excl_transposed_cpu_capture"
    out, db = tmp_path / "out", tmp_path / "results.db"
    r = subprocess.run([kernelopt_bin, "optimize", str(bundle), "--device", "cpu", "--budget", "8", "--out", str(out),
                        "--db", str(db), "-q"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    fusion = report["regions"][0]["fusion"]
    assert fusion["chosen"] is None and not fusion.get("candidates"), fusion
    assert fusion["note"].startswith(("not run: a cascade of this region would take about",
                                      "the search budget was spent")), fusion["note"]
    assert report["elapsed_s"] <= 8 * 1.25 + 5, report["elapsed_s"]


def test_a_bench_row_names_the_fused_region(kernelopt_bin, tmp_path):
    """A bench row whose result is a fused region says so: its kernels are not counted as replaced one by one, so
    the row carries the region (`regions_fused`, `fused`), the progress line counts it and report.md's accepted
    cell names it (docs/bench.md)."""
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(BUNDLE, suite / "level1" / "reverse_cumsum")
    out = tmp_path / "bench"
    r = subprocess.run([kernelopt_bin, "bench", str(suite), "--device", "cpu", "--out", str(out), "--db",
                        str(tmp_path / "results.db"), "--budget-per-problem", "600"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "optimized" and row["correct"] is True, row
    assert row["accepted_count"] == 0 and row["regions_fused"] == 1, row
    assert row["fused"] == ["region 0 of graph 0: fusion:epilogue"]
    assert "0/2 kernel(s) replaced, 1 region(s) fused" in r.stderr, r.stderr
    assert "0/2 + region 0 of graph 0: fusion:epilogue" in (out / "report.md").read_text()
    assert ">0/2 +1</td>" in (out / "report.html").read_text()
