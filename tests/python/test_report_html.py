"""report.html in a real browser: headless Chromium loads the page that
kopt_render_report wrote (the engine's report writer, engine/src/report) and
dumps the DOM after the page's own script ran. That script counts the SVG
charts and the bars inside them that have a non-empty layout box and writes
the counts into body[data-charts-rendered] / body[data-bars-rendered].

Skipped only when Chromium is not installed and this is not CI; in CI
(setup.sh installs the Debian package `chromium`) a missing browser fails."""

import copy
import json
import os
import re
import shutil
import subprocess

import pytest
from conftest import ROOT

GPU_REPORT = {
    "format": "kernelopt-report",
    "format_version": 1,
    "bundle": "corpus/softmax_large",
    "problem": "softmax_large.py",
    "out_dir": "out/",
    "device": "cuda",
    "gpu": "NVIDIA H200",
    "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0", "cuda": "13.0"},
    "performance_measured": True,
    "agents": "builtin",
    "budget_s": 60,
    "elapsed_s": 41.2,
    "stages": [
        {"name": n, "seconds": s}
        for n, s in [("load", 0.1), ("baseline", 2.5), ("profile", 3.0), ("plan", 0.01), ("search", 30.4),
                     ("stitch", 0.2), ("end_to_end", 4.9), ("report", 0.09)]
    ],
    "ceilings": {"copy_tbps": 4.25, "fp32_tflops": 51.0, "bf16_tflops": 795.0, "fp16_tflops": 764.0},
    "module": {"baseline_ms": 1.23, "optimized_ms": 0.984, "speedup": 1.25, "triton_ms": 0.9, "vendor_ms": 0.3,
               "changed": True, "end_to_end": {"gate": "E2E", "status": "passed", "evidence": {"max_abs_err": 1e-6}}},
    "kernels": [
        {"name": "triton_red_fused__softmax_0", "graph": 0, "kind": "reduction", "family": "softmax",
         "aten_ops": ["aten._softmax"], "bottleneck": "memory", "bytes": 268435456, "flops": 0, "floor_ms": 0.063,
         "baseline_ms": 0.149, "optimized_ms": 0.131, "calls_per_run": 1, "accepted": True, "chosen": "c2",
         "note": "2.08x above floor: two passes over each row",
         "candidates": [
             {"id": "c1", "origin": "config", "description": "XBLOCK=8 R0_BLOCK=1024 num_warps=8", "hash": "9f0c",
              "outcome": "rejected", "failed_gate": "G2", "speedup": None,
              "gates": [{"gate": "G1", "status": "passed", "summary": "ok"},
                        {"gate": "G2", "status": "failed", "summary": "seed 3: max abs err 4.1e-2 > 1e-4"},
                        {"gate": "G3", "status": "skipped"}, {"gate": "G4", "status": "skipped"}]},
             {"id": "c2", "origin": "template:softmax", "description": "one pass per row", "hash": "aa11",
              "outcome": "accepted", "failed_gate": None, "speedup": 1.137,
              "gates": [{"gate": g, "status": "passed"} for g in ("G1", "G2", "G3", "G4")]},
         ]},
        {"name": "triton_poi_fused_gelu_1", "graph": 0, "kind": "pointwise", "family": "activation",
         "aten_ops": ["aten.gelu"], "bottleneck": "memory", "bytes": 8388608, "flops": 2097152, "floor_ms": 0.00197,
         "baseline_ms": 0.0021, "optimized_ms": None, "calls_per_run": 2, "accepted": False, "chosen": None,
         "note": "within 1.1x of its floor already", "candidates": []},
    ],
    "vendor": [{"name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ms_per_run": 0.3}],
    "summary": {"kernels": 2, "accepted": 1, "candidates": 2, "rejected_at": {"G1": 0, "G2": 1, "G3": 0, "G4": 0}},
}


def cpu_report():
    """CPU mode: no times, no ceilings, no GPU; floors absent, so the kernel chart shows bytes."""
    r = copy.deepcopy(GPU_REPORT)
    r.update(device="cpu", gpu=None, performance_measured=False, ceilings=None)
    r["module"] = {"baseline_ms": None, "optimized_ms": None, "speedup": None, "triton_ms": None, "vendor_ms": None,
                   "changed": False, "end_to_end": {"gate": "E2E", "status": "not_measured"}}
    for k in r["kernels"]:
        k.update(baseline_ms=None, optimized_ms=None, floor_ms=None, accepted=False, chosen=None)
        for c in k["candidates"]:
            c["speedup"] = None
    r["vendor"][0]["ms_per_run"] = None
    r["stages"][1]["seconds"] = None  # a stage without a time gets no bar
    return r


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if in_ci():
        pytest.fail("chromium not found although CI is set: setup.sh installs the Debian package `chromium`")
    pytest.skip("chromium not installed (apt-get install chromium); CI runs this test")


def render_tool() -> str:
    """$KOPT_RENDER_REPORT, else kopt_render_report on PATH, else build/engine/kopt_render_report."""
    for cand in (os.environ.get("KOPT_RENDER_REPORT"), shutil.which("kopt_render_report"),
                 str(ROOT / "build/engine/kopt_render_report")):
        if cand and os.path.exists(cand):
            return cand
    pytest.fail("kopt_render_report not found: run ./setup.sh (it builds build/engine/), or set KOPT_RENDER_REPORT")


@pytest.fixture(scope="module")
def browser() -> str:
    return chromium()


def render(report: dict, tmp_path):
    """Writes report.json, runs the tool into tmp_path/out, returns that directory."""
    src = tmp_path / "in.json"
    src.write_text(json.dumps(report))
    out = tmp_path / "out"
    r = subprocess.run([render_tool(), str(src), str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out


def dump_dom(browser: str, html, tmp_path) -> str:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,2000",
           "--virtual-time-budget=5000", "--dump-dom", html.as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "</html>" in r.stdout, (r.stdout[-500:], r.stderr[-3000:])
    return r.stdout


def body_attrs(dom: str) -> dict:
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def emitted_bars(html: str) -> int:
    return len(re.findall(r'<rect class="bar ', html))


def test_gpu_report_charts_render(browser, tmp_path):
    out = render(GPU_REPORT, tmp_path)
    assert json.loads((out / "report.json").read_text()) == GPU_REPORT
    assert (out / "report.md").read_text().startswith("# kernelopt report")
    html = (out / "report.html").read_text()
    attrs = body_attrs(dump_dom(browser, out / "report.html", tmp_path))
    assert attrs.get("data-performance-measured") == "true"
    # Per-kernel before/after/floor, the Triton/vendor stacked bar, time by stage.
    assert attrs.get("data-charts-rendered") == "3", attrs
    # 2 kernels x 3 bars + 2 segments + 8 stages, every one laid out with a non-zero box.
    assert emitted_bars(html) == 16
    assert attrs.get("data-bars-rendered") == "16", attrs


def test_cpu_report_has_no_time_bars(browser, tmp_path):
    out = render(cpu_report(), tmp_path)
    html = (out / "report.html").read_text()
    dom = dump_dom(browser, out / "report.html", tmp_path)
    attrs = body_attrs(dom)
    assert attrs.get("data-performance-measured") == "false"
    assert "Performance not measured (CPU mode)." in dom
    # The bytes chart (no floors without ceilings) and the stage chart; no Triton/vendor chart.
    assert attrs.get("data-charts-rendered") == "2", attrs
    assert emitted_bars(html) == 2 + 7
    assert attrs.get("data-bars-rendered") == "9", attrs
    for time_bar in ("bar-before", "bar-after", "seg-triton", "seg-vendor"):
        assert f'class="bar {time_bar}"' not in dom
    assert "null" not in (out / "report.md").read_text() and "null" not in html


def test_hostile_text_is_inert_in_the_browser(browser, tmp_path):
    r = copy.deepcopy(GPU_REPORT)
    r["kernels"][0]["note"] = "<script>document.body.dataset.pwned='script'</script>"
    r["kernels"][1]["note"] = "<img src=x onerror=\"document.body.dataset.pwned='img'\">"
    r["kernels"][0]["name"] = "k</text><script>document.body.dataset.pwned='svg'</script>"
    r["kernels"][0]["candidates"][0]["gates"][1]["summary"] = "</td></tr></table><b id=pwned>x</b>"
    # The LLM agents section carries text an LLM wrote.
    r["kernels"][1]["llm_explanation"] = "<script>document.body.dataset.pwned='llm'</script>"
    r["kernels"][1]["llm_ideas"] = ["<img src=x onerror=\"document.body.dataset.pwned='idea'\">"]
    r["llm"] = {"provider": "openai", "model": "</p><b id=pwned>m</b>", "exchanges": 1, "cost": 0.5,
                "roles": {"<script>document.body.dataset.pwned='role'</script>": {"exchanges": 1}}}
    out = render(r, tmp_path)
    dom = dump_dom(browser, out / "report.html", tmp_path)
    attrs = body_attrs(dom)
    assert "data-pwned" not in attrs, attrs
    assert 'id="pwned"' not in dom
    assert "&lt;script&gt;document.body.dataset.pwned='script'&lt;/script&gt;" in dom
    assert "<h2 id=\"llm\">LLM agents</h2>" in dom
    assert "&lt;script&gt;document.body.dataset.pwned='llm'&lt;/script&gt;" in dom
    # The page's own script still ran and the charts still render.
    assert attrs.get("data-charts-rendered") == "3", attrs


def test_tables_sort_by_value(browser, tmp_path):
    out = render(GPU_REPORT, tmp_path)
    html = (out / "report.html").read_text()
    # A probe after the page's own script: click the Bytes header once, then again, and record the orders.
    probe = """<script>document.addEventListener('DOMContentLoaded', function () {
      var t = document.getElementById('kernel-table'), th = t.tHead.rows[0].cells[3];
      function order() { return Array.prototype.map.call(t.tBodies[0].rows, function (r) { return r.cells[3].textContent; }).join(','); }
      th.click(); document.body.dataset.asc = order();
      th.click(); document.body.dataset.desc = order();
    });</script>"""
    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", probe + "</body>"))
    attrs = body_attrs(dump_dom(browser, probed, tmp_path))
    assert attrs.get("data-asc") == "8.4 MB,268.4 MB", attrs  # by value, not as text
    assert attrs.get("data-desc") == "268.4 MB,8.4 MB", attrs


def bench_object(n_rows: int = 24) -> dict:
    """A measured three-level bench of the shape `kernelopt bench` writes: long problem names, long
    reasons, every column filled (rows as in results.jsonl; the tool summarizes the levels)."""
    rows = []
    for i in range(n_rows):
        level = 1 + i % 3
        name = f"{i:02d}_log_softmax_over_the_middle_dimension_of_a_wide_batch_{i}"
        status = ("optimized", "fallback", "error")[i % 5 % 3]
        compiled, optimized = 0.2 + 0.01 * i, 0.15 + 0.005 * i
        measured = status != "error"
        rows.append({
            "format": "kernelopt-bench-row", "level": level, "problem": f"level{level}/{name}.py", "name": name,
            "status": status, "correct": True if measured else None, "matches_eager": measured or None,
            "measured": measured,
            "reason": ("" if status == "optimized" else
                       "no candidate passed G1-G4 for triton_red_fused__log_softmax_amax_exp_sub_sum_0: G4 "
                       "1.012x: p80 0.512 ms vs baseline p20 0.518 ms / 1.03 = 0.503 ms; host-bound: the call "
                       "spends most of its wall time outside its kernels"),
            "eager": {"device_ms": 0.5 + i, "wall_ms": 0.6 + i, "kernel_ms": 0.45 + i} if measured else None,
            "compiled": {"device_ms": compiled, "wall_ms": compiled + 0.05, "kernel_ms": compiled - 0.01}
            if measured else None,
            "optimized": {"device_ms": optimized if status == "optimized" else compiled, "wall_ms": optimized + 0.05,
                          "kernel_ms": optimized - 0.01} if measured else None,
            "speedup": (compiled / optimized if status == "optimized" else 1.0) if measured else None,
            "wall_speedup": 1.1 if measured else None, "host_bound": i % 4 == 0 if measured else None,
            "kernels": 3, "accepted_count": 2 if status == "optimized" else 0,
            "accepted": ["triton_red_fused__log_softmax_amax_exp_sub_sum_0: c12",
                         "triton_poi_fused__log_softmax_sub_1: c3"] if status == "optimized" else [],
            "vendor_share": 0.25, "result_dir": f"problems/level{level}/{name}",
            "memory": {"measured": True, "peak_bytes": 7.5e9 + i * 1e8, "ratio": 2.1 + 0.01 * i},
            "floor_ms": 0.1, "seconds": 42.0 + i,
            "stages": {"load": 12.0, "workers": 1.0, "baseline": 2.0, "profile": 1.5, "search": 20.0 + i,
                       "stitch": 0.1, "end_to_end": 2.0, "bench_check": 1.0, "bench_times": 0.5},
        })
    return {"format": "kernelopt-bench", "suite": "suites/fresh", "device": "cuda", "gpu": "NVIDIA H200",
            "performance_measured": True, "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0"},
            "settings": {"budget_s": 60, "agents": "builtin"}, "shards": ["0/1"], "expected": n_rows, "rows": rows}


# Runs after the page's own script: where every cell of the level table and the problems table's
# reason column sit against the 1400-px viewport, the page's overflow, and the chart labels' boxes.
LAYOUT_PROBE = """<script>window.addEventListener('load', function () {
  var vw = document.documentElement.clientWidth, d = document.body.dataset, cut = [];
  document.querySelectorAll('#levels th, #levels td').forEach(function (c) {
    var r = c.getBoundingClientRect(); if (r.left < 0 || r.right > vw + 0.5) cut.push(c.textContent.trim());
  });
  d.viewport = String(vw);
  d.levelCells = String(document.querySelectorAll('#levels th, #levels td').length);
  d.levelCut = cut.join('|');
  var reason = document.querySelector('#problems th.reason').getBoundingClientRect();
  d.reasonLeft = String(reason.left); d.reasonRight = String(reason.right);
  d.pageScroll = String(document.documentElement.scrollWidth - vw);
  var links = Array.prototype.map.call(document.querySelectorAll('#problems a[href]'),
    function (a) { return a.getAttribute('href'); });
  d.links = String(links.length); d.firstLink = links[0] || '';
});</script>"""


def test_bench_report_shows_every_level_column_and_the_reason_at_1400px(browser, tmp_path):
    """Issue 28's check: at 1400 px every column of the level table and the problems' reason column are
    on screen (no page-wide horizontal scroll), and each problem links to its own report."""
    out = render(bench_object(), tmp_path)
    html = (out / "report.html").read_text()
    probed = out / "probed.html"
    probed.write_text(html.replace("</body>", LAYOUT_PROBE + "</body>"))
    cmd_base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1200",
                "--virtual-time-budget=5000"]
    r = subprocess.run(cmd_base + ["--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    attrs = body_attrs(r.stdout)
    assert attrs.get("data-viewport") == "1400", attrs
    # 25 columns (6 fast_p each against torch.compile and eager) and 3 levels plus "all", header rows included.
    assert int(attrs["data-level-cells"]) >= 25 * 4, attrs
    assert attrs.get("data-level-cut") == "", attrs  # nothing of the level table beyond the window's edge
    assert 0 <= float(attrs["data-reason-left"]) and float(attrs["data-reason-right"]) <= 1400.5, attrs
    assert attrs.get("data-page-scroll") == "0", attrs
    # Error rows have no report to open; every other row links to its own.
    assert attrs.get("data-links") == str(sum(1 for x in bench_object()["rows"] if x["status"] != "error")), attrs
    assert attrs.get("data-first-link") == "problems/level1/00_log_softmax_over_the_middle_dimension_of_a_wide_batch_0/report.html"
    # And the screenshot itself, 1400 px wide, for a person to look at (kept beside the report).
    shot = out / "report-1400.png"
    r = subprocess.run(cmd_base + [f"--screenshot={shot}", (out / "report.html").as_uri()], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and shot.is_file(), r.stderr[-3000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1400


CHART_LABEL_PROBE = """<script>window.addEventListener('load', function () {
  var cut = [];
  document.querySelectorAll('svg.chart').forEach(function (s) {
    var box = s.getBoundingClientRect();
    s.querySelectorAll('text.label').forEach(function (t) {
      var r = t.getBoundingClientRect(); if (r.left < box.left - 0.5) cut.push(t.textContent);
    });
  });
  document.body.dataset.labelsCut = cut.join('|');
  document.body.dataset.labels = String(document.querySelectorAll('svg.chart text.label').length);
});</script>"""


def test_chart_labels_are_whole_or_elided_in_the_middle_and_never_cut(browser, tmp_path):
    r = copy.deepcopy(GPU_REPORT)
    r["kernels"][0]["name"] = "triton_red_fused__log_softmax_amax_exp_sub_sum_unsqueeze_view_0"
    r["kernels"][1]["name"] = "triton_red_fused__log_softmax_amax_exp_sub_sum_unsqueeze_view_1"
    out = render(r, tmp_path)
    html = (out / "report.html").read_text()
    probed = out / "probed.html"
    probed.write_text(html.replace("</body>", CHART_LABEL_PROBE + "</body>"))
    attrs = body_attrs(dump_dom(browser, probed, tmp_path))
    assert int(attrs["data-labels"]) >= 2 + 8, attrs  # two kernels, eight stages
    assert attrs.get("data-labels-cut") == "", attrs  # no label runs off the chart's left edge
    labels = re.findall(r'<text class="label"[^>]*>([^<]*)</text>', html)
    assert labels[0] != labels[1] and labels[0].endswith("_0") and labels[1].endswith("_1"), labels[:2]


PAGE_PROBE = """<script>window.addEventListener('load', function () {
  var vw = document.documentElement.clientWidth, cut = [];
  document.querySelectorAll('#kernel-table th').forEach(function (c) {
    var r = c.getBoundingClientRect(); if (r.left < 0 || r.right > vw + 0.5) cut.push(c.textContent.trim());
  });
  document.body.dataset.kernelCut = cut.join('|');
  document.body.dataset.pageScroll = String(document.documentElement.scrollWidth - vw);
});</script>"""


def test_optimize_report_uses_the_window_and_its_kernel_table_fits_at_1400px(browser, tmp_path):
    """The optimize report's kernel table with long kernel names and notes: every column on screen at 1400 px
    (no 1280-px cap, no page-wide scroll)."""
    r = copy.deepcopy(GPU_REPORT)
    for i, k in enumerate(r["kernels"]):
        k["name"] = f"triton_red_fused__log_softmax_amax_exp_sub_sum_unsqueeze_view_native_layer_norm_{i}"
        k["note"] = "accepted at 1.42x its floor: the built-in agents found no faster safe variant in the budget " * 2
    out = render(r, tmp_path)
    probed = out / "probed.html"
    probed.write_text((out / "report.html").read_text().replace("</body>", PAGE_PROBE + "</body>"))
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1200",
           "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    attrs = body_attrs(p.stdout)
    assert attrs.get("data-kernel-cut") == "", attrs
    assert attrs.get("data-page-scroll") == "0", attrs
