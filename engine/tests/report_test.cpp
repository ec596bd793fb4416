// The report writer: Markdown and HTML for a full GPU report and a CPU-mode
// report with nulls; no time shown as performance in CPU mode; every string
// from the report escaped; malformed reports render without throwing; output
// is deterministic; write_reports writes the three files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "pipeline/optimize_report.h"
#include "report/report.h"
#include "report/report_svg.h"
#include "test_util.h"
#include "util/error.h"

using nlohmann::json;
namespace rep = kopt::report;

namespace {

json gpu_report() {
  return json::parse(R"({
    "format": "kernelopt-report", "format_version": 1,
    "bundle": "corpus/softmax_large", "problem": "softmax_large.py", "out_dir": "out/",
    "device": "cuda", "gpu": "NVIDIA H200", "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0", "cuda": "13.0"},
    "performance_measured": true, "agents": "builtin", "budget_s": 60, "elapsed_s": 41.2,
    "stages": [{"name": "load", "seconds": 0.1}, {"name": "baseline", "seconds": 2.5}, {"name": "profile", "seconds": 3.0},
               {"name": "plan", "seconds": 0.01}, {"name": "search", "seconds": 30.4}, {"name": "stitch", "seconds": 0.2},
               {"name": "end_to_end", "seconds": 4.9}, {"name": "report", "seconds": 0.09}],
    "ceilings": {"copy_tbps": 4.25, "fp32_tflops": 51.0, "bf16_tflops": 795.0, "fp16_tflops": 764.0},
    "module": {"baseline_ms": 1.23, "optimized_ms": 0.984, "speedup": 1.25, "triton_ms": 0.9, "vendor_ms": 0.3,
               "changed": true,
               "end_to_end": {"gate": "E2E", "status": "passed", "evidence": {"max_abs_err": 1e-6, "speedup": 1.25}}},
    "kernels": [
      {"name": "triton_red_fused__softmax_0", "graph": 0, "kind": "reduction", "family": "softmax",
       "aten_ops": ["aten._softmax"], "bottleneck": "memory", "bytes": 268435456, "flops": 0, "floor_ms": 0.063,
       "baseline_ms": 0.149, "optimized_ms": 0.131, "calls_per_run": 1, "accepted": true, "chosen": "c3",
       "note": "2.08x above floor: two passes over each row",
       "candidates": [
         {"id": "c1", "origin": "config", "description": "XBLOCK=8 R0_BLOCK=1024 num_warps=8", "hash": "9f0c1e2d3c4b5a69",
          "outcome": "rejected", "failed_gate": "G4", "speedup": 1.01,
          "gates": [{"gate": "G1", "status": "passed", "summary": "static checks passed"},
                    {"gate": "G2", "status": "passed", "summary": "5 seeds, max abs err 0"},
                    {"gate": "G3", "status": "passed", "summary": "within tolerance"},
                    {"gate": "G4", "status": "failed", "summary": "1.01x < 1.03x required"}]},
         {"id": "c2", "origin": "template:softmax", "description": "one pass per row", "hash": "77aa",
          "outcome": "rejected", "failed_gate": "G2", "speedup": null,
          "gates": [{"gate": "G1", "status": "passed", "summary": "ok"},
                    {"gate": "G2", "status": "failed", "summary": "seed 3: max abs err 4.1e-2 > 1e-4"},
                    {"gate": "G3", "status": "skipped", "summary": "an earlier gate failed"},
                    {"gate": "G4", "status": "skipped"}]},
         {"id": "c3", "origin": "review", "description": "c2 with R0_BLOCK=512", "hash": "aa11",
          "outcome": "accepted", "failed_gate": null, "speedup": 1.137,
          "gates": [{"gate": "G1", "status": "passed"}, {"gate": "G2", "status": "passed"},
                    {"gate": "G3", "status": "passed"}, {"gate": "G4", "status": "passed", "summary": "1.14x"}]}]},
      {"name": "triton_poi_fused_gelu_1", "graph": 0, "kind": "pointwise", "family": "activation",
       "aten_ops": ["aten.gelu"], "bottleneck": "memory", "bytes": 8388608, "flops": 2097152, "floor_ms": 0.00197,
       "baseline_ms": 0.0021, "optimized_ms": null, "calls_per_run": 2, "accepted": false, "chosen": null,
       "note": "within 1.1x of its floor already", "candidates": []}],
    "vendor": [{"name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ms_per_run": 0.3}],
    "summary": {"kernels": 2, "accepted": 1, "candidates": 3, "rejected_at": {"G1": 0, "G2": 1, "G3": 0, "G4": 1}}
  })");
}

// CPU mode: nulls everywhere times would be, no ceilings, no GPU. The CPU run's own
// wall times are present in a few fields (777.125) and must never be shown.
json cpu_report() {
  return json::parse(R"({
    "format": "kernelopt-report", "format_version": 1,
    "bundle": "corpus/softmax_large", "problem": "softmax_large.py", "out_dir": "out/",
    "device": "cpu", "gpu": null, "versions": {"torch": "2.11.0", "triton": "3.6.0", "cuda": null},
    "performance_measured": false, "agents": "builtin", "budget_s": 60, "elapsed_s": 12.5,
    "stages": [{"name": "load", "seconds": 0.2}, {"name": "baseline", "seconds": null}, {"name": "search", "seconds": 11.0}],
    "ceilings": null,
    "module": {"baseline_ms": 777.125, "optimized_ms": null, "speedup": null, "triton_ms": null, "vendor_ms": null,
               "changed": false, "end_to_end": {"gate": "E2E", "status": "not_measured"}},
    "kernels": [
      {"name": "triton_red_fused__softmax_0", "graph": 0, "kind": "reduction", "family": "softmax",
       "aten_ops": ["aten._softmax"], "bottleneck": "unknown", "bytes": 268435456, "flops": 0, "floor_ms": null,
       "baseline_ms": 777.125, "optimized_ms": null, "calls_per_run": 1, "accepted": false, "chosen": null,
       "note": null,
       "candidates": [
         {"id": "c1", "origin": "config", "description": "XBLOCK=8", "hash": null, "outcome": "rejected",
          "failed_gate": "G2", "speedup": 777.125,
          "gates": [{"gate": "G1", "status": "passed", "summary": null}, {"gate": "G2", "status": "failed", "summary": "NaN positions differ"},
                    {"gate": "G4", "status": "not_measured", "summary": null}]}]}],
    "vendor": [{"name": "aten.mm", "ms_per_run": 777.125}],
    "summary": {"kernels": 1, "accepted": 0, "candidates": 1, "rejected_at": {"G1": 0, "G2": 1, "G3": 0, "G4": 0}}
  })");
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

// Nothing the page could fetch: no external scripts, styles, fonts or images.
void expect_self_contained(const std::string& html) {
  for (const char* bad : {"http://", "https://", "<link", " src=", "@import", "url(", "<img", "<iframe"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
}

}  // namespace

TEST(ReportFormat, Numbers) {
  using namespace rep::detail;
  EXPECT_EQ(format_ms(0.063), "0.063");
  EXPECT_EQ(format_ms(1.23), "1.230");
  EXPECT_EQ(format_ms(0.00412), "0.00412");
  EXPECT_EQ(format_ms(std::nullopt), "—");
  EXPECT_EQ(format_speedup(1.25), "1.25×");
  EXPECT_EQ(format_bytes(268435456), "268.4 MB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_flops(0), "0 FLOP");
  EXPECT_EQ(format_above_floor(0.131, 0.063), "2.08×");
  EXPECT_EQ(format_above_floor(0.131, 0.0), "—");
  EXPECT_EQ(format_seconds(41.2), "41.2 s");
  json j = {{"n", std::numeric_limits<double>::quiet_NaN()}, {"s", 3}, {"z", nullptr}};
  EXPECT_FALSE(number(j, "n"));
  EXPECT_EQ(text(j, "s"), "3");
  EXPECT_EQ(text(j, "z"), "");
  EXPECT_EQ(format_count(j, "z"), "—");
}

TEST(ReportFormat, CleanReplacesInvalidUtf8AndControls) {
  using rep::detail::clean;
  EXPECT_EQ(clean("a\nb\tc"), "a b c");
  EXPECT_EQ(clean("ok \xC3\xA9 \xE2\x80\x94"), "ok \xC3\xA9 \xE2\x80\x94");
  EXPECT_EQ(clean("bad \xFF end"), "bad \xEF\xBF\xBD end");
  EXPECT_EQ(clean("cut \xE2\x80"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(clean("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate is not UTF-8
  EXPECT_EQ(rep::detail::escape_html("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

TEST(ReportMarkdown, GpuReport) {
  std::string md = rep::render_markdown(gpu_report());
  EXPECT_NE(md.find("# kernelopt report: `corpus/softmax_large`"), std::string::npos);
  EXPECT_NE(md.find("**Module speedup: 1.25×** — 1.230 ms → 0.984 ms per run"), std::string::npos);
  EXPECT_NE(md.find("| Device | cuda — NVIDIA H200 |"), std::string::npos);
  EXPECT_NE(md.find("torch 2.11.0+cu130 · triton 3.6.0 · cuda 13.0"), std::string::npos);
  EXPECT_NE(md.find("copy 4.25 TB/s · fp32 51.0 TFLOP/s · bf16 795.0 TFLOP/s · fp16 764.0 TFLOP/s"), std::string::npos);
  EXPECT_NE(md.find("2 kernels, 1 accepted, 3 candidates; rejected at G1 0 · G2 1 · G3 0 · G4 1"), std::string::npos);
  // Stages, the Triton/vendor split and the vendor kernels.
  EXPECT_NE(md.find("| search | 30.4 s | 74% |"), std::string::npos);
  EXPECT_NE(md.find("| plan | 0.01 s | <1% |"), std::string::npos);
  EXPECT_NE(md.find("| Triton kernels | 0.900 | 75% |"), std::string::npos);
  EXPECT_NE(md.find("| Vendor calls | 0.300 | 25% |"), std::string::npos);
  EXPECT_NE(md.find("| `sm90_xmma_gemm_bf16bf16_bf16f32` | 0.300 |"), std::string::npos);
  // Kernel rows: before, after, floor, x above floor, speedup, accepted.
  EXPECT_NE(md.find("| `triton_red_fused__softmax_0` | reduction / softmax | memory | 268.4 MB | none counted (no tl.dot) | 0.149 | "
                    "0.131 | 0.063 | 2.37× → 2.08× | 1.14× | yes (c3) |"),
            std::string::npos)
      << md;
  // A kernel that fell back: after = before.
  EXPECT_NE(md.find("| 0.00210 | 0.00210 | 0.00197 | 1.07× → 1.07× | 1.00× | no (fell back) |"), std::string::npos)
      << md;
  // Candidates with their gates.
  EXPECT_NE(md.find("| c2 | template:softmax | `one pass per row` | `77aa` | rejected at G2 | — | passed: ok | "
                    "failed: seed 3: max abs err 4.1e-2 \\> 1e-4 | skipped: an earlier gate failed | skipped |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| c1 | config | `XBLOCK=8 R0_BLOCK=1024 num_warps=8` | `9f0c1e2d3c4b` | rejected at G4 | 1.01× |"),
            std::string::npos);
  EXPECT_NE(md.find("End-to-end gate | passed"), std::string::npos);
  EXPECT_EQ(md.find("null"), std::string::npos);
}

TEST(ReportMarkdown, AUserAutotuneKernelsWinnerIsAPasteableTritonConfig) {
  json r = gpu_report();
  json& k = r["kernels"][0];
  k["kind"] = "user_autotune";
  k["chosen"] = "c9";
  k["candidates"].push_back({{"id", "c9"}, {"origin", "config"}, {"description", "num_warps=8 num_stages=2"},
                             {"config", {{"BLOCK_SIZE", 1024}, {"EVEN", true}, {"num_warps", 8}, {"num_stages", 2}}}});
  std::string md = rep::render_markdown(r);
  EXPECT_NE(md.find("Winning config, to paste into the kernel's `@triton.autotune(configs=[...])`: "
                    "`triton.Config({'BLOCK_SIZE': 1024, 'EVEN': True}, num_stages=2, num_warps=8)`"),
            std::string::npos)
      << md;
  // Inductor's own kernels: their configs are Inductor's to choose, no such line.
  EXPECT_EQ(rep::render_markdown(gpu_report()).find("Winning config"), std::string::npos);
}

TEST(ReportMarkdown, CpuReportShowsNoTimes) {
  std::string md = rep::render_markdown(cpu_report());
  EXPECT_NE(md.find("**Performance not measured (CPU mode).**"), std::string::npos);
  EXPECT_NE(md.find("No kernel was replaced"), std::string::npos);
  EXPECT_EQ(md.find("777"), std::string::npos) << md;  // CPU times never shown
  EXPECT_EQ(md.find("Speedup"), std::string::npos);
  EXPECT_EQ(md.find("Before (ms)"), std::string::npos);
  EXPECT_NE(md.find("## Triton vs vendor time\n\nNot measured (CPU mode). Vendor calls kept as they are: `aten.mm`."),
            std::string::npos);
  EXPECT_NE(md.find("| `triton_red_fused__softmax_0` | reduction / softmax | unknown | 268.4 MB | none counted (no tl.dot) | — | "
                    "no (fell back) | — |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| c1 | config | `XBLOCK=8` | — | rejected at G2 | passed | failed: NaN positions differ | "
                    "not measured |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| Device | cpu |"), std::string::npos);
  EXPECT_NE(md.find("| Ceilings | — |"), std::string::npos);
  EXPECT_NE(md.find("| baseline | — | — |"), std::string::npos);
  EXPECT_EQ(md.find("null"), std::string::npos);
}

// 23.4 GiB peak over the job, 12.8 GiB torch.compile's own peak for one call of the model.
json with_memory(json r, bool measured) {
  r["memory"] = {{"measured", measured}, {"peak_bytes", 25125558682LL}, {"compiled_peak_bytes", 13743895347LL},
                 {"ratio", 25125558682.0 / 13743895347.0}};
  return r;
}

TEST(ReportMemory, MeasuredPeakIsOneLineNearTheHeadline) {
  const std::string line =
      "Peak device memory: 23.4 GiB, 1.83x torch.compile's own peak for one call of the model (12.8 GiB)";
  json r = with_memory(gpu_report(), true);
  EXPECT_EQ(rep::detail::memory_line(r), line);
  std::string md = rep::render_markdown(r);
  size_t at = md.find(line);
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_LT(at, md.find("| Bundle |"));  // above the overview, right under the headline
  std::string html = rep::render_html(r);
  EXPECT_NE(html.find("<p id=\"memory\">Peak device memory: 23.4 GiB, 1.83x torch.compile&#39;s own peak"),
            std::string::npos);
  // Without torch.compile's own figure: the peak alone.
  r["memory"]["compiled_peak_bytes"] = nullptr, r["memory"]["ratio"] = nullptr;
  EXPECT_EQ(rep::detail::memory_line(r), "Peak device memory: 23.4 GiB");
  // A GPU worker that did not answer: not measured, saying why; no null, no zero.
  r["memory"] = {{"measured", false}, {"peak_bytes", nullptr}, {"compiled_peak_bytes", nullptr}, {"ratio", nullptr}};
  EXPECT_EQ(rep::detail::memory_line(r), "Peak device memory: not measured (the worker did not report it)");
  EXPECT_EQ(rep::render_markdown(r).find("null"), std::string::npos);
}

TEST(ReportMemory, CpuModeSaysNotMeasuredAndNamesTheAccounting) {
  json r = cpu_report();
  r["memory"] = {{"measured", false}, {"peak_bytes", nullptr}, {"compiled_peak_bytes", nullptr}, {"ratio", nullptr}};
  EXPECT_EQ(rep::detail::memory_line(r), "Peak device memory: not measured (CPU mode)");
  r = with_memory(cpu_report(), false);
  std::string md = rep::render_markdown(r);
  EXPECT_NE(md.find("Peak device memory: not measured (CPU mode); the CPU worker's own accounting, not device "
                    "memory: 23.4 GiB, 1.83x"),
            std::string::npos)
      << md;
  EXPECT_NE(rep::render_html(r).find("Peak device memory: not measured (CPU mode)"), std::string::npos);
  // A report from before the figure existed has no line at all.
  EXPECT_EQ(rep::detail::memory_line(cpu_report()), "");
  EXPECT_EQ(rep::render_markdown(cpu_report()).find("Peak device memory"), std::string::npos);
  // Malformed: any shape renders without throwing.
  for (json bad : {json("x"), json(3), json::array(), json{{"measured", "yes"}, {"peak_bytes", "big"}}}) {
    r["memory"] = bad;
    EXPECT_NO_THROW(rep::render_markdown(r));
    EXPECT_NO_THROW(rep::render_html(r));
  }
}

TEST(ReportFormat, MemoryInBinaryUnits) {
  using rep::detail::format_mem;
  EXPECT_EQ(format_mem(std::nullopt), "—");
  EXPECT_EQ(format_mem(512), "512 B");
  EXPECT_EQ(format_mem(1536), "1.5 KiB");
  EXPECT_EQ(format_mem(268435456), "256.0 MiB");
  EXPECT_EQ(format_mem(25125558682.0), "23.4 GiB");
}

TEST(ReportHtml, GpuReportHasThreeChartsWithBars) {
  std::string html = rep::render_html(gpu_report());
  expect_self_contained(html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<body data-performance-measured=\"true\">"), std::string::npos);
  EXPECT_NE(html.find("Module speedup: 1.25×"), std::string::npos);
  for (const char* id : {"id=\"chart-kernels\"", "id=\"chart-split\"", "id=\"chart-stages\""})
    EXPECT_EQ(count(html, id), 1u) << id;
  // Before for both kernels, after for both (the fallback's after is its before), floor for both.
  EXPECT_EQ(count(html, "class=\"bar bar-before\""), 2u);
  EXPECT_EQ(count(html, "class=\"bar bar-after\""), 2u);
  EXPECT_EQ(count(html, "class=\"bar bar-floor\""), 2u);
  EXPECT_EQ(count(html, "class=\"bar seg-triton\""), 1u);
  EXPECT_EQ(count(html, "class=\"bar seg-vendor\""), 1u);
  EXPECT_EQ(count(html, "class=\"bar bar-stage\""), 8u);
  EXPECT_NE(html.find("Triton kernels: 0.900 ms (75%)"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"sortable candidates\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"gate s-failed\">failed<br><span class=\"sum\">seed 3: max abs err 4.1e-2 &gt; 1e-4"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"0.149\">0.149</td>"), std::string::npos);
  EXPECT_NE(html.find("2.37× &rarr; 2.08×"), std::string::npos);
  EXPECT_EQ(html.find("null"), std::string::npos);
  EXPECT_EQ(count(html, "<script>"), 1u);
}

TEST(ReportHtml, CpuReportHasNoTimeBars) {
  std::string html = rep::render_html(cpu_report());
  expect_self_contained(html);
  EXPECT_NE(html.find("<body data-performance-measured=\"false\">"), std::string::npos);
  EXPECT_NE(html.find("Performance not measured (CPU mode)."), std::string::npos);
  EXPECT_EQ(html.find("777"), std::string::npos);
  for (const char* bar : {"bar bar-before", "bar bar-after", "bar bar-floor", "bar seg-", "Speedup", "chart-split"})
    EXPECT_EQ(html.find(bar), std::string::npos) << bar;
  // No floors in CPU mode without ceilings: the kernel chart shows the bytes each kernel must move.
  EXPECT_EQ(count(html, "class=\"bar bar-bytes\""), 1u);
  EXPECT_NE(html.find("268.4 MB"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"bar bar-stage\""), 2u);  // the stage without seconds gets no bar
  EXPECT_EQ(html.find("null"), std::string::npos);

  // With floors (ceilings known), CPU mode charts the floors, still no time.
  json r = cpu_report();
  r["kernels"][0]["floor_ms"] = 0.063;
  html = rep::render_html(r);
  EXPECT_EQ(count(html, "class=\"bar bar-floor\""), 1u);
  EXPECT_EQ(html.find("bar bar-before"), std::string::npos);
  EXPECT_EQ(html.find("777"), std::string::npos);
}

TEST(ReportEscaping, HostileTextStaysText) {
  json r = gpu_report();
  auto& k = r["kernels"][0];
  k["note"] = "<script>alert(1)</script> | a & b";
  k["name"] = "k<b>\"'&";
  k["candidates"][0]["description"] = "x`y` | <img src=x onerror=alert(2)>";
  k["candidates"][1]["gates"][1]["summary"] = "</td></tr></table><script>alert(3)</script>";
  r["bundle"] = "</title><script>alert(4)</script>";
  r["vendor"][0]["name"] = "<svg onload=alert(5)>";
  r["stages"][0]["name"] = "</text><script>alert(6)</script>";
  k["declined"] = {"template:softmax: <script>alert(7)</script>"};

  std::string html = rep::render_html(r);
  EXPECT_EQ(count(html, "<script>"), 1u);  // only the page's own
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<svg onload"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; | a &amp; b"), std::string::npos);
  EXPECT_NE(html.find("k&lt;b&gt;&quot;&#39;&amp;"), std::string::npos);
  EXPECT_NE(html.find("&lt;/title&gt;&lt;script&gt;alert(4)"), std::string::npos);
  EXPECT_NE(html.find("&lt;/text&gt;&lt;script&gt;alert(6)"), std::string::npos);
  EXPECT_NE(html.find("Declined: template:softmax: &lt;script&gt;alert(7)"), std::string::npos);

  std::string md = rep::render_markdown(r);
  EXPECT_NE(md.find("\\<script\\>alert(1)\\</script\\> \\| a \\& b"), std::string::npos) << md;
  EXPECT_NE(md.find("``x`y` \\| <img src=x onerror=alert(2)>``"), std::string::npos) << md;  // code span: literal
  EXPECT_NE(md.find("Declined: template:softmax: \\<script\\>alert(7)"), std::string::npos) << md;
  for (const char* raw : {"<script>alert(1)", "<script>alert(3)", "<script>alert(6)", "<script>alert(7)"})
    EXPECT_EQ(md.find(raw), std::string::npos) << raw;
  // Names are code spans, which Markdown shows literally.
  EXPECT_NE(md.find("`</title><script>alert(4)</script>`"), std::string::npos);
  EXPECT_NE(md.find("`<svg onload=alert(5)>`"), std::string::npos);
  // Every candidate row of kernel 0 still has its 10 cells: pipes in text do not split cells.
  size_t row = md.find("| c1 | config |");
  ASSERT_NE(row, std::string::npos);
  std::string line = md.substr(row, md.find('\n', row) - row);
  size_t cells = 0;
  for (size_t i = 0; i < line.size(); ++i) cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  EXPECT_EQ(cells, 11u) << line;
}

TEST(ReportRobustness, MalformedReportsRenderWithoutThrowing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<json> bad = {
      json(),
      json::array({1, 2}),
      json(3),
      json::object(),
      json::parse(R"({"performance_measured": "yes", "kernels": "none", "stages": {"a": 1}, "module": 3,
                      "vendor": [null, 4, {"name": 5}], "summary": [], "ceilings": "fast", "versions": [1]})"),
      json::parse(R"({"performance_measured": true, "kernels": [1, null, {"candidates": "no"},
                      {"name": null, "candidates": [null, {"gates": [null, 2, {"gate": 4, "status": []}]}]}],
                      "stages": [null, {"seconds": "fast"}, {"name": 1}], "module": {"end_to_end": 5},
                      "summary": {"rejected_at": {"G1": "x"}}})"),
  };
  json n = gpu_report();
  n["module"]["speedup"] = nan;
  n["kernels"][0]["optimized_ms"] = nan;
  n["kernels"][0]["floor_ms"] = -1.0;
  n["stages"][0]["seconds"] = std::numeric_limits<double>::infinity();
  bad.push_back(n);
  for (const json& r : bad) {
    std::string md, html;
    EXPECT_NO_THROW(md = rep::render_markdown(r)) << r.dump();
    EXPECT_NO_THROW(html = rep::render_html(r)) << r.dump();
    EXPECT_EQ(md.find("null"), std::string::npos) << r.dump();
    EXPECT_EQ(html.find("null"), std::string::npos) << r.dump();
    EXPECT_EQ(html.find("nan"), std::string::npos) << r.dump();
    EXPECT_EQ(html.find("inf"), std::string::npos) << r.dump();
  }
  // "performance_measured": "yes" is not true: nothing is shown as performance.
  EXPECT_NE(rep::render_markdown(bad[4]).find("Performance not measured"), std::string::npos);
}

TEST(ReportDeterminism, SameReportSameBytes) {
  json a = gpu_report();
  // The same object built in another key order.
  json b = json::object();
  std::vector<std::string> keys;
  for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) b[*it] = a[*it];
  EXPECT_EQ(rep::render_markdown(a), rep::render_markdown(b));
  EXPECT_EQ(rep::render_html(a), rep::render_html(b));
  EXPECT_EQ(rep::render_html(a), rep::render_html(gpu_report()));
  EXPECT_EQ(rep::render_markdown(cpu_report()), rep::render_markdown(cpu_report()));
}

TEST(ReportWrite, WritesThreeFiles) {
  auto dir = std::filesystem::temp_directory_path() / "kopt_report_test" / "nested" / "out";
  std::filesystem::remove_all(dir.parent_path().parent_path());
  json r = gpu_report();
  r["kernels"][0]["note"] = std::string("invalid utf-8: \xFF\xFE");
  rep::write_reports(r, dir);
  std::string j = kopt::testing::read((dir / "report.json").string());
  EXPECT_NE(j.find("\n  \"agents\": \"builtin\""), std::string::npos);  // pretty
  json back = json::parse(j);
  EXPECT_EQ(back["kernels"][0]["note"], "invalid utf-8: \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(back["module"], r["module"]);
  EXPECT_EQ(kopt::testing::read((dir / "report.md").string()), rep::render_markdown(r));
  EXPECT_EQ(kopt::testing::read((dir / "report.html").string()), rep::render_html(r));
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  std::filesystem::remove_all(dir.parent_path().parent_path());
}

TEST(ReportWrite, UnwritableDirectoryIsAUserError) {
  EXPECT_THROW(rep::write_reports(gpu_report(), "/proc/definitely/not/writable"), kopt::UserError);
}

// What issue 28 asked of the reports: each gate's numbers beside its rule, "not run" candidates folded,
// chart labels that tell kernels apart, no "0 FLOP" where FLOPs were not counted.
TEST(ReportGates, SummariesCarryTheNumbersJudged) {
  using kopt::pipeline::gate_summary;
  json g3 = {{"gate", "G3"}, {"status", "failed"},
             {"evidence", {{"candidate_vs_fp64_max_rel", 2.46e-7}, {"baseline_vs_fp64_max_rel", 1.5e-7},
                           {"allowed_max_rel", 2.25e-7}, {"vs_baseline_max_rel", 3e-6}, {"rule", "float64 fallback"}}}};
  EXPECT_EQ(gate_summary(g3), "error vs float64 2.46e-07, allowed 2.25e-07 (the baseline's 1.5e-07)");
  json within = {{"gate", "G3"}, {"evidence", {{"candidate_vs_fp64_max_rel", 1e-7}, {"vs_baseline_max_rel", 2e-6},
                                               {"rule", "within tolerance of the baseline"}}}};
  EXPECT_EQ(gate_summary(within), "max rel difference from the baseline 2e-06");
  json g4 = {{"gate", "G4"}, {"status", "failed"},
             {"evidence", {{"baseline", {{"p20_ms", 0.5}, {"p80_ms", 0.52}, {"median_ms", 0.51}}},
                           {"candidate", {{"p20_ms", 0.48}, {"p80_ms", 0.49}, {"median_ms", 0.485}}},
                           {"gamma", 1.03}, {"speedup", 1.0515}, {"rule", "candidate p80 <= baseline p20 / gamma"}}}};
  EXPECT_EQ(gate_summary(g4), "1.052x: p80 0.49 ms vs baseline p20 0.5 ms / 1.03 = 0.485 ms");
  json g2 = {{"gate", "G2"}, {"status", "failed"},
             {"evidence", {{"reason", "outputs differ from the original kernel's"},
                           {"mismatched_args", {{{"arg", 2}, {"ok", false}, {"max_abs", 0.041}, {"scale", 1.0},
                                                 {"atol", 1e-5}, {"rtol", 1e-4}}}}}}};
  EXPECT_EQ(gate_summary(g2), "outputs differ from the original kernel's: arg 2: max abs err 0.041 (output scale 1; "
                              "allowed atol 1e-05 + rtol 0.0001 x |value|)");
  g2["evidence"]["mismatched_args"][0]["mismatched"] = 4096;  // a float output's count of elements off
  EXPECT_EQ(gate_summary(g2), "outputs differ from the original kernel's: arg 2: max abs err 0.041 (output scale 1; "
                              "allowed atol 1e-05 + rtol 0.0001 x |value|, 4096 elements outside it)");
  json g1 = {{"gate", "G1"}, {"evidence", {{"findings", {{{"passed", false}, {"message", "stores outside the mask"}}}}}}};
  EXPECT_EQ(gate_summary(g1), "stores outside the mask");
}

TEST(ReportHtml, GateCellsShowNumbersWithTheRuleOnHover) {
  json r = gpu_report();
  json& g = r["kernels"][0]["candidates"][0]["gates"][1];
  g["summary"] = "max abs err 4.1e-2 > 1e-4";
  g["evidence"] = {{"rule", "within tolerance of the baseline"}};
  std::string html = rep::render_html(r);
  EXPECT_NE(html.find("title=\"within tolerance of the baseline\""), std::string::npos);
  EXPECT_NE(html.find("<span class=\"sum\">max abs err 4.1e-2 &gt; 1e-4</span>"), std::string::npos);
}

TEST(ReportHtml, NotRunCandidatesAreFolded) {
  json r = gpu_report();
  json& cs = r["kernels"][0]["candidates"];
  for (int i = 0; i < 3; ++i)
    cs.push_back({{"id", "n" + std::to_string(i)}, {"origin", "config"}, {"description", "XBLOCK=4"},
                  {"outcome", "not_run"}, {"gates", json::array()}});
  std::string html = rep::render_html(r);
  size_t fold = html.find("<details class=\"not-run\"><summary>3 candidates not run</summary>");
  ASSERT_NE(fold, std::string::npos) << html;
  EXPECT_GT(html.find(">n0<"), fold);  // inside the fold, after the candidates that ran
  EXPECT_LT(html.find(">c1<"), fold);
  std::string md = rep::render_markdown(r);
  EXPECT_NE(md.find("Not run (3): n0, n1, n2."), std::string::npos) << md;
  EXPECT_EQ(md.find("| n0 |"), std::string::npos);
}

TEST(ReportHtml, ChartLabelsKeepBothEndsOfAKernelName) {
  json r = gpu_report();
  std::string a = "triton_red_fused__log_softmax_amax_exp_sub_sum_unsqueeze_view_0";
  std::string b = "triton_red_fused__log_softmax_amax_exp_sub_sum_unsqueeze_view_1";
  r["kernels"][0]["name"] = a, r["kernels"][1]["name"] = b;
  std::string html = rep::render_html(r);
  std::string ea = rep::svg::elide_middle(a, rep::svg::kLabelChars), eb = rep::svg::elide_middle(b, rep::svg::kLabelChars);
  EXPECT_NE(ea, eb);
  EXPECT_EQ(ea.substr(0, 10), "triton_red");
  EXPECT_EQ(ea.substr(ea.size() - 7), "_view_0");
  EXPECT_NE(html.find(">" + ea + "</text>"), std::string::npos);
  EXPECT_NE(html.find("<title>" + a + "</title>"), std::string::npos);  // the whole name on hover
  EXPECT_EQ(rep::svg::elide_middle("short_name", 56), "short_name");
}

TEST(ReportHtml, ZeroMatmulFlopsIsNotZeroFlop) {
  std::string html = rep::render_html(gpu_report());
  EXPECT_EQ(html.find("0 FLOP"), std::string::npos);
  EXPECT_NE(html.find("none counted"), std::string::npos);
  EXPECT_EQ(rep::render_markdown(gpu_report()).find("0 FLOP"), std::string::npos);
}

TEST(ReportConfig, AHelionKernelsWinnerIsAPasteableHelionConfig) {
  json k = {{"name", "triton_helion_add_relu_0"}, {"kind", "user_autotune"}, {"accepted", true}, {"chosen", "c4"},
            {"helion_config", {{"block_sizes", {1024}}, {"num_warps", 4}, {"indexing", "pointer"}}},
            {"candidates", {{{"id", "c4"}, {"config", {{"num_warps", 8}, {"num_stages", 2}}}}}}};
  EXPECT_EQ(rep::detail::winning_config(k),
            "helion.Config(block_sizes=[1024], indexing='pointer', num_stages=2, num_warps=8)");
  json r = gpu_report();
  r["kernels"][0].update(k);
  EXPECT_NE(rep::render_markdown(r).find("`@helion.kernel(config=...)`: `helion.Config(block_sizes=[1024]"),
            std::string::npos);
  EXPECT_NE(rep::render_html(r).find("<code>helion.Config(block_sizes=[1024], indexing=&#39;pointer&#39;"),
            std::string::npos);
  // A winner that set a kernel parameter has no helion.Config spelling: no line rather than a wrong one.
  k["candidates"][0]["config"]["XBLOCK"] = 64;
  EXPECT_EQ(rep::detail::winning_config(k), "");
  // Not accepted, or Inductor's own kernel: nothing to paste.
  k["candidates"][0]["config"].erase("XBLOCK");
  k["accepted"] = false;
  EXPECT_EQ(rep::detail::winning_config(k), "");
  k["accepted"] = true, k["kind"] = "reduction";
  EXPECT_EQ(rep::detail::winning_config(k), "");
}
