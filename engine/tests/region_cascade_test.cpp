// The region cascade (verify/region_cascade.h): G1's strict check of a candidate module's host code
// (verify/region_host.h) on the honest fused reverse_cumsum and on the hostile region candidates of
// tests/error/regions/ (no worker), then the whole cascade with the CPU worker: the honest fusion
// passes G1-G3, a fused kernel that writes half the output fails G2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "agents/coder/fusion/fusion.h"
#include "artifact/bundle.h"
#include "artifact/pin_config.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "verify/region_cascade.h"
#include "test_util.h"

using namespace kopt;
namespace fs = std::filesystem;

namespace {

using kopt::testing::cpu_worker;

verify::RegionFacts facts_of(const ir::Bundle& b, size_t region) {
  const ir::Artifact& a = *b.graphs.at(0);
  auto rs = profile::regions(a, *a.entry_function(), b.meta["graphs"][0]["args"]);
  return profile::facts(rs.at(region));
}

std::unique_ptr<ir::Bundle> bundle(const std::string& name) {
  return ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "corpus" / name).string());
}

// The built-in coder's fused module for reverse_cumsum's one region: its first candidate, the flip folded with
// the store over the scan's names (flipped along r); the second is the same fold through the buffer's digits.
std::string honest_module(const ir::Bundle& b) {
  const ir::Artifact& a = *b.graphs.at(0);
  auto rs = profile::regions(a, *a.entry_function(), b.meta["graphs"][0]["args"]);
  auto plan = agents::fusion::plan_region(a, *a.entry_function(), rs.at(0));
  EXPECT_EQ(plan.candidates.size(), 2u);
  EXPECT_NE(plan.candidates.at(0).edit.source.find("tl.flip("), std::string::npos);
  return stitch::stitch(a, {}, {}, {plan.candidates.at(0).edit});
}

struct Hostile {
  std::string gate, check, bundle, file;
  size_t region = 0;
  std::string module;  // the file without its two header lines
};

std::vector<Hostile> hostile_files() {
  const std::regex header(R"(^# expect: (G\d) (\w+); bundle: ([\w.\-]+); region: (\d+))");
  std::vector<Hostile> out;
  for (const auto& e : fs::directory_iterator(fs::path(KOPT_SOURCE_DIR) / "tests" / "error" / "regions")) {
    if (e.path().extension() != ".py") continue;
    std::stringstream ss;
    ss << std::ifstream(e.path()).rdbuf();
    std::string src = ss.str();
    std::smatch m;
    std::string first = src.substr(0, src.find('\n'));
    EXPECT_TRUE(std::regex_search(first, m, header)) << e.path() << ": bad header " << first;
    size_t body = src.find('\n', src.find('\n') + 1) + 1;
    out.push_back({m[1], m[2], m[3], e.path().filename().string(), std::stoul(m[4].str()), src.substr(body)});
  }
  return out;
}

std::string failing(const verify::RegionG1& r) {
  for (const auto& f : r.g1.findings)
    if (!f.passed) return f.check + ": " + f.message;
  return "";
}

}  // namespace

TEST(RegionG1, TheBuiltinFusionPassesEveryStaticCheck) {
  auto b = bundle("reverse_cumsum");
  verify::RegionG1 r = verify::check_region(*b->graphs[0], facts_of(*b, 0), honest_module(*b));
  EXPECT_TRUE(r.g1.passed) << failing(r);
  ASSERT_TRUE(r.edit);
  EXPECT_EQ(r.edit->launches, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(r.edit->internal, std::vector<std::string>{"buf0"});
}

TEST(RegionG1, EveryHostileRegionCandidateIsRejectedByItsCheck) {
  size_t g1 = 0;
  for (const Hostile& h : hostile_files()) {
    SCOPED_TRACE(h.file);
    auto b = bundle(h.bundle);
    verify::RegionG1 r = verify::check_region(*b->graphs[0], facts_of(*b, h.region), h.module);
    if (h.gate != "G1") {  // rejected later: every static check passes
      EXPECT_TRUE(r.g1.passed) << failing(r);
      continue;
    }
    ++g1;
    EXPECT_FALSE(r.g1.passed);
    EXPECT_EQ(failing(r).substr(0, h.check.size() + 1), h.check + ":") << failing(r);
  }
  EXPECT_GE(g1, 3u);
}

TEST(RegionCascadeWorker, TheFusedFlipPassesG1ToG3AndHalfAnOutputFailsG2) {
  auto b = bundle("reverse_cumsum");
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *b, 0, facts_of(*b, 0), honest_module(*b), o);
  ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
  ASSERT_EQ(ok.cascade.gates.size(), 4u);
  for (size_t g = 0; g < 3; ++g) EXPECT_EQ(ok.cascade.gates[g].status, verify::GateStatus::passed);
  EXPECT_EQ(ok.cascade.gates[3].status, verify::GateStatus::not_measured);
  EXPECT_EQ(ok.cascade.gates[1].evidence["outputs"], nlohmann::json::array({"buf1"}));
  ASSERT_EQ(ok.cascade.gates[1].evidence["runs"].size(), 3u);  // recorded (twice: determinism), two seeds
  for (const auto& run : ok.cascade.gates[1].evidence["runs"]) EXPECT_TRUE(run["match"].get<bool>()) << run.dump();
  EXPECT_TRUE(ok.cascade.gates[1].evidence["runs"][0]["deterministic"].get<bool>());

  for (const Hostile& h : hostile_files()) {
    if (h.gate != "G2") continue;
    SCOPED_TRACE(h.file);
    verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *b, 0, facts_of(*b, h.region), h.module, o);
    EXPECT_FALSE(bad.cascade.accepted);
    ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
    EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
    EXPECT_EQ(bad.cascade.gates[1].evidence["mismatched_outputs"][0]["name"], "buf1")
        << bad.cascade.gates[1].evidence.dump(2);
  }
}

TEST(RegionCascadeWorker, ARegroupedProductPassesG2OnTheOrderProbe) {
  // A reversed cumprod's fused flip, its scan pinned to chunks of 256 where the baseline's scan takes the row in
  // one: on the special seed the product overflows at other positions (NaN where inf met a zero). The original
  // launches with their scan at another config differ so too (the region's order probe): G2 passes on the float64
  // rule, and G3 judges it.
  auto b = ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "tests/python/data/cumprod_rev_rows_cpu_capture").string());
  const ir::Artifact& a = *b->graphs.at(0);
  auto rs = profile::regions(a, *a.entry_function(), b->meta["graphs"][0]["args"]);
  auto plan = agents::fusion::plan_region(a, *a.entry_function(), rs.at(0));
  ASSERT_FALSE(plan.candidates.empty());
  const stitch::RegionEdit& edit = plan.candidates.at(0).edit;
  std::string fused = stitch::stitch(a, {}, {}, {edit});
  auto fa = ir::build(fused, "fused module");
  const ir::Kernel* k = fa->find_kernel(edit.kernel);
  ASSERT_NE(k, nullptr);
  std::string regrouped = stitch::stitch(
      *fa, {{edit.kernel, ir::pin_config(k->source, k->name, {{"XBLOCK", 1}, {"R0_BLOCK", 256}, {"num_warps", 4}}),
             "test"}});
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 3;
  verify::RegionCascadeResult r = verify::run_region_cascade(sup, *b, 0, facts_of(*b, 0), regrouped, o);
  const auto json = results::cascade_json(r.cascade).dump(2);
  ASSERT_GE(r.cascade.gates.size(), 3u) << json;
  const auto& g2 = r.cascade.gates[1].evidence;
  EXPECT_EQ(r.cascade.gates[1].status, verify::GateStatus::passed) << json;
  EXPECT_TRUE(g2.value("needs_fp64", false)) << json;
  std::vector<std::string> probed;
  for (const auto& run : g2["runs"])
    if (run.contains("order_sensitive")) probed.push_back(run["inputs"]);
  EXPECT_EQ(probed, std::vector<std::string>{"seed 2 (special)"}) << json;
  EXPECT_EQ(r.cascade.gates[2].status, verify::GateStatus::passed) << json;
}

TEST(RegionCascadeWorker, ATiledConsumerOfTheScanAndItsInputFoldsAndAWrongSecondLoadFailsG2) {
  // An exclusive cumsum over a transposed layout (fixture captured here): the epilogue folds the 2-D tiled
  // `cumsum - x` kernel into the scan, loading the input again through the scan's own parameter. The honest
  // fusion passes G1-G3; the same with that load one element off (wrapped inside its row) fails G2.
  auto b = ir::load_bundle(
      (fs::path(KOPT_SOURCE_DIR) / "tests/python/data/cumsum_excl_transposed_cpu_capture").string());
  const ir::Artifact& a = *b->graphs.at(0);
  auto rs = profile::regions(a, *a.entry_function(), b->meta["graphs"][0]["args"]);
  auto plan = agents::fusion::plan_region(a, *a.entry_function(), rs.at(0));
  ASSERT_EQ(plan.candidates.size(), 1u);
  std::string fused = stitch::stitch(a, {}, {}, {plan.candidates.at(0).edit});
  const std::string second =
      "fuse_tmp1 = tl.load(in_ptr0 + (1 * fuse_x2 + 16 * fuse_y0 + 336 * fuse_y1), r0_mask & xmask)";
  ASSERT_NE(fused.find(second), std::string::npos) << fused;
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *b, 0, facts_of(*b, 0), fused, o);
  ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
  std::string wrong = kopt::testing::replaced(
      fused, second, "fuse_tmp1 = tl.load(in_ptr0 + (((fuse_x2 + 1) % 16) + 16 * fuse_y0 + 336 * fuse_y1), "
                     "r0_mask & xmask)");
  verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *b, 0, facts_of(*b, 0), wrong, o);
  EXPECT_FALSE(bad.cascade.accepted);
  ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
  EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
  EXPECT_EQ(bad.cascade.gates[1].evidence["mismatched_outputs"][0]["name"], "buf1");
}

// The screen before a region cascade (search/regions.cpp on a GPU): a candidate failing G1 is never run; an
// honest one passes G1 and, in CPU mode, gets no timings (the cascade then decides, untimed).
TEST(RegionCascadeWorker, TheScreenRunsNothingThatFailsG1AndTimesNothingInCpuMode) {
  auto b = bundle("reverse_cumsum");
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  size_t hostile = 0;
  for (const Hostile& h : hostile_files()) {
    if (h.gate != "G1" || h.bundle != "reverse_cumsum") continue;
    SCOPED_TRACE(h.file);
    ++hostile;
    verify::RegionScreen s = verify::screen_region(sup, *b, 0, facts_of(*b, h.region), h.module, o, 5);
    EXPECT_EQ(s.g1.status, verify::GateStatus::failed);
    EXPECT_FALSE(s.baseline_ms || s.candidate_ms);
  }
  EXPECT_GE(hostile, 1u);
  verify::RegionScreen ok = verify::screen_region(sup, *b, 0, facts_of(*b, 0), honest_module(*b), o, 5);
  EXPECT_EQ(ok.g1.status, verify::GateStatus::passed);
  EXPECT_FALSE(ok.baseline_ms || ok.candidate_ms);
}
