// The suite runner's pure parts: level and shard parsing, discovery order,
// the round-robin split (shards are disjoint and cover the suite), the table's
// statistics on rows with known speedups (geomean with fallbacks at 1.0,
// optimized-only geomean, fast_p counting only correct rows, errors excluded
// from speedups but counted in N), and the renderers (a measured run draws the
// speedup distribution; a CPU run shows "not measured", never a speedup).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/suite.h"
#include "bench/table.h"
#include "cli/commands.h"
#include "pipeline/bench_problem.h"
#include "report/bench_report.h"
#include "util/error.h"

using nlohmann::json;
namespace fs = std::filesystem;
namespace b = kopt::bench;

namespace {

json row(int level, const std::string& id, const std::string& status, json speedup, json correct) {
  return {{"level", level}, {"problem", id}, {"status", status}, {"speedup", speedup}, {"wall_speedup", speedup},
          {"correct", correct}, {"measured", !speedup.is_null()}, {"host_bound", false},
          {"eager", {{"device_ms", 2.0}, {"wall_ms", 2.2}, {"kernel_ms", 1.9}}},
          {"compiled", {{"device_ms", 1.0}, {"wall_ms", 1.2}, {"kernel_ms", 0.9}}},
          {"optimized", {{"device_ms", 0.5}, {"wall_ms", 0.7}, {"kernel_ms", 0.45}}},
          {"kernels", 2}, {"accepted_count", 1}, {"accepted", {"k0: c3"}}, {"reason", ""}};
}

}  // namespace

TEST(BenchSuite, ParsesLevelsAndShards) {
  EXPECT_EQ(b::parse_levels("3,1,1"), (std::vector<int>{1, 3}));
  EXPECT_THROW(b::parse_levels("1,,2"), kopt::UserError);
  EXPECT_THROW(b::parse_levels("0"), kopt::UserError);
  auto s = b::parse_shard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.text(), "2/5");
  EXPECT_EQ(b::parse_shard("").text(), "0/1");
  for (const char* bad : {"5/5", "1", "a/2", "1/0", "-1/2"}) EXPECT_THROW(b::parse_shard(bad), kopt::UserError) << bad;
}

TEST(BenchSuite, DiscoversProblemsAndBundlesInOrderAndShardsCoverThemOnce) {
  fs::path root = fs::temp_directory_path() / "kopt_bench_suite_test";
  fs::remove_all(root);
  fs::create_directories(root / "level1" / "bundle_a");
  fs::create_directories(root / "level1" / "not_a_bundle");
  fs::create_directories(root / "level2");
  std::ofstream(root / "level1" / "bundle_a" / "meta.json") << "{}";
  for (const char* f : {"level1/z.py", "level1/a.py", "level1/_helper.py", "level1/notes.txt", "level2/m.py"})
    std::ofstream(root / f) << "x = 1\n";
  std::vector<std::string> notes;
  auto all = b::discover(root.string(), {1, 2, 3}, &notes);
  std::vector<std::string> ids;
  for (const auto& p : all) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"level1/a.py", "level1/bundle_a", "level1/z.py", "level2/m.py"}));
  EXPECT_TRUE(all[1].bundle);
  EXPECT_EQ(all[1].name, "bundle_a");
  EXPECT_EQ(all[0].name, "a");
  ASSERT_EQ(notes.size(), 1u);  // level3 is missing
  EXPECT_NE(notes[0].find("level3"), std::string::npos);

  std::multiset<std::string> seen;
  for (size_t i = 0; i < 3; ++i)
    for (const auto& p : b::select_shard(all, {i, 3})) seen.insert(p.id);
  EXPECT_EQ(seen, std::multiset<std::string>(ids.begin(), ids.end()));
  EXPECT_EQ(b::select_shard(all, {0, 3}).size(), 2u);

  EXPECT_THROW(b::discover(root.string(), {3}, nullptr), kopt::UserError);
  EXPECT_THROW(b::discover((root / "missing").string(), {1}, nullptr), kopt::UserError);
  fs::remove_all(root);
}

TEST(BenchRow, FailureKindsFromReasons) {
  using kopt::pipeline::failure_kind;
  EXPECT_EQ(failure_kind("capturing level1/x.py failed: the capture did not finish within 600 s and was stopped "
                         "(raise --timeout)"),
            "timeout");
  EXPECT_EQ(failure_kind("capturing level1/x.py failed: torch.compile failed: BackendCompilerFailed"), "compile");
  EXPECT_EQ(failure_kind("problem file x.py fails to import: ImportError: no module y"), "import");
  EXPECT_EQ(failure_kind("CUDA out of memory. Tried to allocate 2.00 GiB"), "oom");
  EXPECT_EQ(failure_kind("worker for device cuda did not start (crashed): ..."), "crash");
}

TEST(BenchRow, FusedRegionsNameTheChosenOnesOnly) {
  // A region tried with none chosen has `chosen: null` (row 50 of a fresh draw became an internal-error row when
  // the row read it as a string); a fallback names none even where a region was chosen.
  using json = nlohmann::json;
  json report = {{"regions",
                  {{{"graph", 0}, {"index", 0},
                    {"fusion", {{"chosen", nullptr}, {"candidates", {{{"id", "r1"}, {"origin", "split:segments"}}}}}}},
                   {{"graph", 0}, {"index", 1}},
                   {{"graph", 1}, {"index", 0},
                    {"fusion", {{"chosen", "r2"},
                                {"candidates", {{{"id", "r1"}, {"origin", "fusion:epilogue"}},
                                                {{"id", "r2"}, {"origin", "fusion:row_merge"}}}}}}}}}};
  EXPECT_EQ(kopt::pipeline::fused_regions(report, true), json({"region 0 of graph 1: fusion:row_merge"}));
  EXPECT_EQ(kopt::pipeline::fused_regions(report, false), json::array());
  EXPECT_EQ(kopt::pipeline::fused_regions(json::object(), true), json::array());
}

TEST(BenchTable, GeomeanFastPAndCorrectness) {
  std::vector<json> rows = {
      row(1, "level1/a.py", "optimized", 2.0, true),   // fast at every p up to 1.5, not 2.0 (strict)
      row(1, "level1/b.py", "optimized", 1.25, true),
      row(1, "level1/c.py", "fallback", 1.0, true),    // counts 1.0 in the geomean, never "fast"
      row(1, "level1/d.py", "optimized", 4.0, false),  // wrong: in the geomean (it was measured) but never fast
      row(1, "level1/e.py", "error", nullptr, nullptr),
      row(2, "level2/f.py", "optimized", 1.1, true),
  };
  rows[0]["eager"]["device_ms"] = 0.8;
  json t = b::summarize(rows);
  ASSERT_EQ(t.size(), 3u);  // level 1, level 2, all
  const json& l1 = t[0];
  EXPECT_EQ(l1["level"], "1");
  EXPECT_EQ(l1["problems"], 5);
  EXPECT_EQ(l1["optimized"], 3);
  EXPECT_EQ(l1["fallback"], 1);
  EXPECT_EQ(l1["errors"], 1);
  EXPECT_EQ(l1["correct"], 3);
  EXPECT_DOUBLE_EQ(l1["correct_rate"].get<double>(), 0.6);
  EXPECT_EQ(l1["geomean_n"], 4);
  EXPECT_NEAR(l1["geomean"].get<double>(), std::pow(2.0 * 1.25 * 1.0 * 4.0, 0.25), 1e-12);
  EXPECT_EQ(l1["optimized_n"], 3);
  EXPECT_NEAR(l1["geomean_optimized"].get<double>(), std::pow(2.0 * 1.25 * 4.0, 1.0 / 3), 1e-12);
  // KernelBench's p: fast_0 is the correct share of rows that were measured.
  EXPECT_DOUBLE_EQ(l1["fast_p"]["0.0"].get<double>(), 3.0 / 5);
  EXPECT_DOUBLE_EQ(l1["fast_p"]["0.5"].get<double>(), 3.0 / 5);
  EXPECT_DOUBLE_EQ(l1["fast_p"]["0.8"].get<double>(), 3.0 / 5);
  EXPECT_DOUBLE_EQ(l1["fast_p"]["1.0"].get<double>(), 2.0 / 5);
  EXPECT_DOUBLE_EQ(l1["fast_p"]["1.5"].get<double>(), 1.0 / 5);
  EXPECT_DOUBLE_EQ(l1["fast_p"]["2.0"].get<double>(), 0.0);
  EXPECT_FALSE(l1["fast_p"].contains("1.03"));
  // Against eager: eager 2.0 ms over optimized 0.5 ms (a: 0.8 ms, so 1.6x).
  EXPECT_NEAR(l1["geomean_eager"].get<double>(), std::pow(1.6 * 4 * 4 * 4, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(l1["fast_p_eager"]["1.5"].get<double>(), 3.0 / 5);  // a, b, c; d is wrong
  EXPECT_DOUBLE_EQ(l1["fast_p_eager"]["2.0"].get<double>(), 2.0 / 5);  // b, c
  EXPECT_EQ(t[2]["level"], "all");
  EXPECT_EQ(t[2]["problems"], 6);
}

TEST(BenchTable, UnmeasuredRowsGiveNoSpeedups) {
  std::vector<json> rows = {row(1, "level1/a", "optimized", nullptr, true), row(1, "level1/b", "fallback", nullptr, true)};
  json t = b::summarize(rows);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0]["measured"].get<bool>());
  EXPECT_TRUE(t[0]["geomean"].is_null());
  EXPECT_TRUE(t[0]["fast_p"]["1.0"].is_null());
  EXPECT_DOUBLE_EQ(t[0]["correct_rate"].get<double>(), 1.0);
}

TEST(BenchTable, HeadroomRecoveredCountsRowsWellAboveTheirFloorFallbacksIncluded) {
  // compile 1.0 ms everywhere: a 1.5x win with the floor at 0.5; a fallback with the floor at 0.25;
  // a row at 1.05x its floor (not counted); a row without a floor (not counted).
  std::vector<json> rows = {row(1, "level1/a", "optimized", 1.5, true), row(1, "level1/b", "fallback", 1.0, true),
                            row(1, "level1/c", "optimized", 1.04, true), row(1, "level1/d", "optimized", 2.0, true)};
  rows[0]["floor_ms"] = 0.5, rows[1]["floor_ms"] = 0.25, rows[2]["floor_ms"] = 1.0 / 1.05;
  json t = b::summarize(rows);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["headroom_n"].get<size_t>(), 2u);
  EXPECT_NEAR(t[0]["headroom"].get<double>(), std::log(1.5) / (std::log(2.0) + std::log(4.0)), 1e-12);
  json bench = {{"suite", "s"}, {"device", "cuda"}, {"performance_measured", true}, {"settings", json::object()},
                {"shards", {"0/1"}}, {"expected", 4}, {"levels", t}, {"rows", rows}};
  EXPECT_NE(kopt::report::render_bench_markdown(bench).find("| 19% (2) |"), std::string::npos);
  EXPECT_NE(kopt::report::render_bench_html(bench).find(">19%<br><small>(2)</small></td>"), std::string::npos);
  rows.resize(1), rows[0].erase("floor_ms");
  EXPECT_TRUE(b::summarize(rows)[0]["headroom"].is_null());
}

TEST(BenchTable, WhereTheTimeWentIsMeansWhosePartsAddUp) {
  // Three timed rows (one captured ahead, two captured by their job) and one without stages.
  std::vector<json> rows = {row(1, "level1/a", "optimized", 1.5, true), row(1, "level1/b", "fallback", 1.0, true),
                            row(1, "level1/c", "optimized", 1.2, true), row(1, "level1/d", "error", nullptr, nullptr)};
  rows[0]["seconds"] = 30.0, rows[0]["stages"] = {{"capture_ahead", 18.0}, {"load", 0.1}, {"workers", 0.4},
                                                  {"baseline", 1.0}, {"profile", 0.5}, {"search", 9.0},
                                                  {"stitch", 0.1}, {"end_to_end", 1.9}, {"bench_check", 1.0},
                                                  {"bench_times", 1.0}};
  rows[1]["seconds"] = 20.0, rows[1]["stages"] = {{"load", 16.0}, {"search", 0.0}};
  rows[2]["seconds"] = 70.0, rows[2]["stages"] = {{"load", 22.0}, {"plan", 1.0}, {"search", 40.0}, {"regions", 2.0},
                                                  {"end_to_end", 3.0}};
  json t = b::summarize(rows);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["time_n"].get<size_t>(), 3u);
  const json& tm = t[0]["time"];
  EXPECT_DOUBLE_EQ(tm["total"].get<double>(), (48.0 + 20.0 + 70.0) / 3);  // a capture ahead counts in its total
  EXPECT_DOUBLE_EQ(tm["capture"].get<double>(), (18.1 + 16.0 + 22.0) / 3);
  EXPECT_DOUBLE_EQ(tm["start"].get<double>(), 0.4 / 3);
  EXPECT_DOUBLE_EQ(tm["measure"].get<double>(), 1.5 / 3);
  EXPECT_DOUBLE_EQ(tm["search"].get<double>(), (9.0 + 43.0) / 3);
  EXPECT_DOUBLE_EQ(tm["verify"].get<double>(), (2.0 + 3.0) / 3);
  EXPECT_DOUBLE_EQ(tm["bench"].get<double>(), 2.0 / 3);
  double parts = 0;
  for (const char* p : b::kTimeParts) parts += tm[p].get<double>();
  EXPECT_NEAR(parts, tm["total"].get<double>(), 1e-9);  // "other" closes the sum
  EXPECT_NEAR(tm["other"].get<double>(), (48.0 - 33.0 + 20.0 - 16.0 + 70.0 - 68.0) / 3, 1e-9);
  json bench = {{"suite", "s"}, {"device", "cuda"}, {"performance_measured", true}, {"settings", json::object()},
                {"shards", {"0/1"}}, {"expected", 4}, {"levels", t}, {"rows", rows}};
  std::string md = kopt::report::render_bench_markdown(bench);
  EXPECT_NE(md.find("## Where the time went"), std::string::npos);
  EXPECT_NE(md.find("| 1 | 3 | 46.0 | 18.7 | 0.1 | 0.5 | 17.3 | 1.7 | 0.7 | 7.0 |"), std::string::npos) << md;
  EXPECT_NE(kopt::report::render_bench_html(bench).find("id=\"time\""), std::string::npos);
  for (auto& r : rows) r.erase("stages");  // rows from before per-stage times: no section
  bench["levels"] = b::summarize(rows);
  EXPECT_EQ(kopt::report::render_bench_markdown(bench).find("## Where the time went"), std::string::npos);
}

TEST(BenchTable, TheTerminalTableFitsIn120ColumnsAndKeepsTheFigures) {
  std::vector<json> rows = {row(1, "level1/a_problem_with_a_very_long_name_that_goes_on_and_on.py", "optimized", 2.0,
                                true),
                            row(1, "level1/b.py", "fallback", 1.0, true), row(2, "level2/c.py", "error", nullptr, nullptr)};
  rows[1]["reason"] = std::string(300, 'x');  // a long reason is cut, not wrapped
  rows[2]["reason"] = "capturing level2/c.py failed: torch.compile failed: BackendCompilerFailed × 3";
  rows[0]["seconds"] = 10.0, rows[0]["stages"] = {{"load", 4.0}, {"search", 5.0}};
  json bench = {{"suite", "s"}, {"device", "cuda"}, {"gpu", "NVIDIA H200"}, {"performance_measured", true},
                {"settings", {{"budget_s", 60}, {"agents", "builtin"}}}, {"shards", {"0/1"}}, {"expected", 3},
                {"levels", b::summarize(rows)}, {"rows", rows}};
  std::string out = kopt::report::render_bench_terminal(bench);
  size_t lines = 0;
  for (size_t start = 0; start < out.size();) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    size_t cols = 0;
    for (char c : line) cols += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(cols, kopt::report::kTerminalWidth) << line;
    start = end + 1, ++lines;
  }
  EXPECT_GT(lines, 8u);
  EXPECT_NE(out.find("1.41× (2)"), std::string::npos) << out;  // level 1's geomean with its count
  EXPECT_NE(out.find("level1/b.py"), std::string::npos);
  EXPECT_NE(out.find("level1/a_problem_with_a_very_lon…"), std::string::npos) << out;
  EXPECT_NE(out.find("1.000 → 0.500"), std::string::npos) << out;
  EXPECT_NE(out.find("capturing level2/c.py failed"), std::string::npos);
  EXPECT_NE(out.find("Where the time went"), std::string::npos);
}

TEST(BenchRow, ModuleFloorTakesEachKernelsExcessOverItsFloor) {
  // baseline_ms and floor_ms are both per run (all of a kernel's calls): calls_per_run does not scale them.
  json report = {{"kernels",
                  {{{"name", "a"}, {"baseline_ms", 0.5}, {"floor_ms", 0.2}, {"calls_per_run", 1}},
                   {{"name", "b"}, {"baseline_ms", 0.1}, {"floor_ms", 0.05}, {"calls_per_run", 2}},
                   {{"name", "c"}, {"baseline_ms", 0.04}, {"floor_ms", 0.05}, {"calls_per_run", 1}},  // under its floor
                   {{"name", "d"}, {"baseline_ms", nullptr}, {"floor_ms", 0.3}}}}};
  auto f = kopt::pipeline::module_floor_ms(report, 1.0);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 1.0 - 0.3 - 0.05, 1e-12);
  EXPECT_FALSE(kopt::pipeline::module_floor_ms(report, 0.34).has_value());  // isolated excess beyond the module's time
  EXPECT_FALSE(kopt::pipeline::module_floor_ms(json{{"kernels", json::array()}}, 1.0).has_value());
}

TEST(BenchRow, ModuleFloorCarriesTheProfilersExcessIntoTheBenchsTimeInProportion) {
  // A max pool (H200): 13.353 ms timed alone by the profiler, floor 0.689 ms; the module 13.092 ms in the bench.
  json report = {{"kernels", {{{"name", "pool"}, {"baseline_ms", 13.353}, {"floor_ms", 0.689}}}},
                 {"module", {{"triton_ms", 13.353}, {"vendor_ms", 0.0}}}};
  auto f = kopt::pipeline::module_floor_ms(report, 13.092);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 0.689 * 13.092 / 13.353, 1e-9);  // not 13.092 - (13.353 - 0.689) = 0.428
  // With a vendor call beside it, only the Triton kernel's share of the excess goes.
  report["module"]["vendor_ms"] = 2.0;
  EXPECT_NEAR(*kopt::pipeline::module_floor_ms(report, 15.353), 15.353 - (13.353 - 0.689), 1e-9);
}

TEST(BenchRow, ModuleFloorCountsARegionAtItsOnePassFloor) {
  // A flip kernel and a scan (each at its own floor of 1.0 ms: 2.0 ms together) whose region moves
  // its input once and its output once (1.0 ms): the module's floor is what fusion can reach.
  json report = {{"kernels", {{{"name", "scan"}, {"graph", 0}, {"baseline_ms", 1.6}, {"floor_ms", 1.0}},
                              {{"name", "flip"}, {"graph", 0}, {"baseline_ms", 1.5}, {"floor_ms", 1.0}},
                              {{"name", "other"}, {"graph", 0}, {"baseline_ms", 0.3}, {"floor_ms", 0.1}}}},
                 {"regions", {{{"graph", 0}, {"kernels", {"scan", "flip"}}, {"floor_ms", 1.0}},
                              {{"graph", 0}, {"kernels", {"other"}}, {"floor_ms", 0.1}}}}};
  auto f = kopt::pipeline::module_floor_ms(report, 3.5);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 3.5 - (3.1 - 1.0) - 0.2, 1e-12);
  // A kernel launched in two regions (a repeated layer) leaves its regions to the per-kernel floors.
  report["regions"].push_back({{"graph", 0}, {"kernels", {"flip", "other"}}, {"floor_ms", 0.5}});
  f = kopt::pipeline::module_floor_ms(report, 3.5);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(*f, 3.5 - 0.6 - 0.5 - 0.2, 1e-12);
  // A region with a tl.dot kernel: its floor counts FLOPs the region's bytes do not, so per kernel.
  report["regions"].erase(2);
  report["kernels"][0]["flops"] = 1e9;
  EXPECT_NEAR(*kopt::pipeline::module_floor_ms(report, 3.5), 3.5 - 0.6 - 0.5 - 0.2, 1e-12);
}

TEST(BenchReport, MeasuredRunDrawsTheDistributionCpuRunClaimsNothing) {
  std::vector<json> rows = {row(1, "level1/a.py", "optimized", 1.6, true), row(1, "level1/b.py", "fallback", 1.0, true),
                            row(1, "level1/<x>.py", "error", nullptr, nullptr)};
  rows[2]["reason"] = "problem file fails to import: <script>alert(1)</script> | pipe";
  json bench = {{"suite", "s"}, {"device", "cuda"}, {"performance_measured", true}, {"gpu", "NVIDIA H200"},
                {"settings", {{"budget_s", 30}, {"agents", "builtin"}}}, {"shards", {"0/1"}}, {"expected", 3},
                {"levels", b::summarize(rows)}, {"rows", rows}};
  std::string html = kopt::report::render_bench_html(bench);
  EXPECT_NE(html.find("id=\"dist-1\""), std::string::npos);
  EXPECT_NE(html.find("<rect class=\"bar"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);  // escaped
  EXPECT_NE(html.find("1.60×"), std::string::npos);
  std::string md = kopt::report::render_bench_markdown(bench);
  EXPECT_NE(md.find("\\| pipe"), std::string::npos);  // a pipe in a reason cannot break the table
  EXPECT_NE(md.find("| 1 | 3 | 1 | 1 | 1 | 67% |"), std::string::npos);

  bench["device"] = "cpu", bench["performance_measured"] = false;
  for (json& r : bench["rows"]) r["speedup"] = nullptr, r["measured"] = false;
  bench["levels"] = b::summarize(bench["rows"].get<std::vector<json>>());
  html = kopt::report::render_bench_html(bench);
  md = kopt::report::render_bench_markdown(bench);
  EXPECT_EQ(html.find("<rect class=\"bar"), std::string::npos);
  // The only "×" left is the legend's "counts 1.0×": no speedup is shown as measured.
  EXPECT_EQ(md.find("×"), md.find("1.0×") + 3);
  EXPECT_EQ(md.find("×", md.find("×") + 1), std::string::npos);
  EXPECT_NE(md.find("Performance not measured (CPU mode)"), std::string::npos);
}

TEST(BenchTable, PeakMemoryColumnAndTheLevelsLargestRatio) {
  std::vector<json> rows = {row(1, "level1/a.py", "optimized", 1.6, true), row(1, "level1/b.py", "fallback", 1.0, true),
                            row(1, "level1/c.py", "fallback", 1.0, true), row(2, "level2/d.py", "fallback", 1.0, true)};
  auto mem = [](bool measured, json peak, json ratio) {
    return json{{"measured", measured}, {"peak_bytes", peak}, {"compiled_peak_bytes", 13743895347LL}, {"ratio", ratio}};
  };
  rows[0]["memory"] = mem(true, 25125558682LL, 1.828);
  rows[1]["memory"] = mem(true, 1073741824LL, 2.5);
  rows[2]["memory"] = mem(false, 99999999999LL, 9.0);  // a CPU worker's accounting: never the level's figure
  // rows[3]: a row from before the field existed
  json t = b::summarize(rows);
  EXPECT_DOUBLE_EQ(t[0]["max_peak_ratio"].get<double>(), 2.5);
  EXPECT_TRUE(t[1]["max_peak_ratio"].is_null());
  EXPECT_DOUBLE_EQ(t[2]["max_peak_ratio"].get<double>(), 2.5);  // all levels

  EXPECT_EQ(kopt::report::peak_mem_cell(rows[0]), "23.4 GiB (1.8x)");
  EXPECT_EQ(kopt::report::peak_mem_cell(rows[2]), "—");
  EXPECT_EQ(kopt::report::peak_mem_cell(rows[3]), "—");
  json no_ratio = rows[0];
  no_ratio["memory"]["ratio"] = nullptr;
  EXPECT_EQ(kopt::report::peak_mem_cell(no_ratio), "23.4 GiB");

  json bench = {{"suite", "s"}, {"device", "cuda"}, {"performance_measured", true}, {"gpu", "NVIDIA H200"},
                {"settings", {{"budget_s", 30}, {"agents", "builtin"}}}, {"shards", {"0/1"}}, {"expected", 4},
                {"levels", t}, {"rows", rows}};
  std::string md = kopt::report::render_bench_markdown(bench);
  EXPECT_NE(md.find("| vendor share | peak mem | reason |"), std::string::npos);
  EXPECT_NE(md.find("| — | 23.4 GiB (1.8x) | — |"), std::string::npos) << md;  // vendor share, peak mem, reason
  EXPECT_NE(md.find("(0) | 2.50x |"), std::string::npos) << md;                   // the level's largest ratio
  std::string html = kopt::report::render_bench_html(bench);
  EXPECT_NE(html.find(">peak mem</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"25125558682\">23.4 GiB<br><small>1.8x</small></td>"),
            std::string::npos);
  EXPECT_NE(html.find(">2.50x</td>"), std::string::npos);
}

TEST(BenchMerge, RowsKeepTheirMemoryFields) {
  fs::path root = fs::temp_directory_path() / "kopt_bench_merge_memory_test";
  fs::remove_all(root);
  json settings = {{"device", "cuda"}, {"budget_s", 30}};
  json mem = {{"measured", true}, {"peak_bytes", 2048}, {"compiled_peak_bytes", 1024}, {"ratio", 2.0}};
  for (int i = 0; i < 2; ++i) {
    fs::path d = root / ("shard" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "run.json") << json{{"settings", settings}, {"shard", std::to_string(i) + "/2"}, {"expected", 1}};
    json r = row(1, "level1/p" + std::to_string(i) + ".py", "fallback", 1.0, true);
    r["memory"] = mem, r["memory_after_forget_bytes"] = 4096 + i;
    std::ofstream(d / "results.jsonl") << r.dump() << "\n";
  }
  kopt::cli::BenchMergeOptions o;
  o.dirs = {(root / "shard0").string(), (root / "shard1").string()};
  o.out = (root / "merged").string();
  ASSERT_EQ(kopt::cli::bench_merge(o), 0);
  std::ifstream merged(root / "merged" / "results.jsonl");
  int n = 0;
  for (std::string line; std::getline(merged, line); ++n) {
    json r = json::parse(line);
    EXPECT_EQ(r["memory"], mem);
    EXPECT_EQ(r["memory_after_forget_bytes"], 4096 + n);
  }
  EXPECT_EQ(n, 2);
  fs::remove_all(root);
}
