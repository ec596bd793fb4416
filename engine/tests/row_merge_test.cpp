// The row merge (agents/coder/fusion/row_merge.h) on the captured group_norm bundle (Inductor:
// Welford statistics per (sample, group), then a pointwise normalize with a per-channel scale and
// shift): the merged kernel's shape, G1 on its module, then G1-G3 with the CPU worker; and the
// index evaluator it samples index maps with.
#include <gtest/gtest.h>

#include <filesystem>

#include "agents/coder/fusion/fusion.h"
#include "artifact/index_map.h"
#include "artifact/bundle.h"
#include "artifact/pyparse/ast.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "verify/region_cascade.h"
#include "test_util.h"

using namespace kopt;
using namespace kopt::agents::fusion;
using kopt::ir::eval_int;
using kopt::testing::corpus;

namespace {

std::optional<int64_t> evaluated(const std::string& expr, const std::map<std::string, int64_t>& env) {
  auto m = py::parse(expr + "\n", "<test>");
  return eval_int(m->root()->list("body").front()->child("value"), env);
}

struct Planned {
  std::unique_ptr<ir::Bundle> b;
  std::vector<profile::Region> regions;
  RegionPlan plan;
};

Planned planned(const std::string& name) {
  Planned p;
  p.b = name.find('/') == std::string::npos
            ? corpus(name)
            : ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / name).string());
  const ir::Artifact& a = *p.b->graphs.at(0);
  p.regions = profile::regions(a, *a.entry_function(), p.b->meta["graphs"][0]["args"]);
  p.plan = plan_region(a, *a.entry_function(), p.regions.at(0));
  return p;
}

const RegionCandidate* merged(const RegionPlan& plan) {
  for (const RegionCandidate& c : plan.candidates)
    if (c.origin == "fusion:row_merge") return &c;
  return nullptr;
}

std::string declines(const RegionPlan& plan) {
  std::string out;
  for (const std::string& d : plan.declined) out += d + "\n";
  return out;
}

}  // namespace

TEST(FusionIndex, EvaluatesWithPythonsFlooredDivision) {
  EXPECT_EQ(evaluated("(x // 256) % 64", {{"x", 65535}}), 63);
  EXPECT_EQ(evaluated("x4 // 8", {{"x4", 255}}), 31);
  EXPECT_EQ(evaluated("-7 // 2", {}), -4);  // C++ would give -3
  EXPECT_EQ(evaluated("-7 % 2", {}), 1);
  EXPECT_EQ(evaluated("1023 + ((-1)*x0) + 1024*x1", {{"x0", 3}, {"x1", 2}}), 3068);
  EXPECT_FALSE(evaluated("x // 0", {{"x", 1}}));
  EXPECT_FALSE(evaluated("y + 1", {{"x", 1}}));          // unbound
  EXPECT_FALSE(evaluated("tl.full([1], 2, tl.int32)", {}));  // a call
}

TEST(FusionRowMerge, GroupNormsStatisticsStayInRegisters) {
  Planned p = planned("group_norm");
  // Rows of 2048 fit one program: the single-pass forms (one row per program, 16 and 8 warps) first,
  // then the two-loop merge under Inductor's own heuristics.
  ASSERT_EQ(p.plan.candidates.size(), 3u) << declines(p.plan);
  for (size_t i = 0; i < 2; ++i) {
    const RegionCandidate& v = p.plan.candidates[i];
    EXPECT_EQ(v.origin, "fusion:row_merge");
    EXPECT_NE(v.description.find("single pass: each row read once, XBLOCK=1 R0_BLOCK=2048 num_warps="),
              std::string::npos) << v.description;
    EXPECT_NE(v.edit.source.find("@triton_heuristics.fixed_config("), std::string::npos);
    // The second pass's re-load of the row is gone: one load of in_ptr0 in the whole kernel.
    size_t loads = 0;
    for (size_t at = v.edit.source.find("tl.load(in_ptr0"); at != std::string::npos;
         at = v.edit.source.find("tl.load(in_ptr0", at + 1))
      ++loads;
    EXPECT_EQ(loads, 1u) << v.edit.source;
  }
  const RegionCandidate* c = &p.plan.candidates[2];
  EXPECT_EQ(c->description.find("single pass"), std::string::npos);
  const stitch::RegionEdit& e = c->edit;
  EXPECT_EQ(e.kernel, "triton_red_fused_native_group_norm_0_poi_fused_native_group_norm_1");
  EXPECT_EQ(e.launches, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(e.internal, (std::vector<std::string>{"buf0", "buf1"}));  // both statistics, in one candidate
  // The producer's input, then the consumer's pointers (prefixed) but its re-read input, which the
  // second pass loads as the producer did, then the sizes.
  EXPECT_EQ(e.args, "arg2_1, arg0_1, arg1_1, buf3, 32, 2048");
  for (const char* want : {
           "def triton_red_fused_native_group_norm_0_poi_fused_native_group_norm_1(in_ptr0, "
           "fuse_in_ptr3, fuse_in_ptr4, fuse_out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : "
           "tl.constexpr):",
           "'signature': {'in_ptr0': '*fp32', 'fuse_in_ptr3': '*fp32', 'fuse_in_ptr4': "
           "'*fp32', 'fuse_out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', "
           "'R0_BLOCK': 'constexpr'}",
           "fuse_s0 = (tmp2).to(tl.float32)", "fuse_s1 = (tmp6).to(tl.float32)",
           // The first pass keeps the row in L2 for the second.
           "eviction_policy='evict_last'",
           // The second pass: the consumer's element is the producer's own load index.
           "        fuse_xindex = r0_1 + 2048*x0\n", "        fuse_xmask = r0_mask & xmask\n",
           "        fuse_tmp0 = tl.load(in_ptr0 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_first', "
           "other=0.0)\n",
           "        fuse_tmp1 = fuse_s0\n", "        fuse_tmp3 = fuse_s1\n",
           "        fuse_x1 = ((fuse_xindex // 256) % 64)\n",
           "        tl.store(fuse_out_ptr0 + (fuse_x3), fuse_tmp13, fuse_xmask)\n"})
    EXPECT_NE(e.source.find(want), std::string::npos) << want << "\n" << e.source;
  EXPECT_EQ(e.source.find("out_ptr1"), std::string::npos) << e.source;  // the statistics are never stored

  // G1: exactly the region's edits, and the merged kernel's own static checks.
  const ir::Artifact& a = *p.b->graphs.at(0);
  std::string module = stitch::stitch(a, {}, {}, {e});
  verify::RegionG1 g1 = verify::check_region(a, profile::facts(p.regions[0]), module);
  std::string failed;
  for (const auto& f : g1.g1.findings)
    if (!f.passed) failed += f.check + ": " + f.message + "\n";
  EXPECT_TRUE(g1.g1.passed) << failed;
}

TEST(FusionRowMergeWorker, BothFormsOfTheMergedGroupNormPassG1ToG3) {
  Planned p = planned("group_norm");
  ASSERT_EQ(p.plan.candidates.size(), 3u) << declines(p.plan);
  worker::SupervisorOptions wo;
  wo.argv = {"python3", "-m", "kernelopt.worker"};
  wo.env["PYTHONPATH"] = std::string(KOPT_SOURCE_DIR) + "/python";
  wo.slots = {"cpu"};
  worker::Supervisor sup(wo);
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  std::string two_loops;
  for (size_t i : {0, 2}) {  // the single pass (one config of two), then the two-loop merge
    const RegionCandidate& c = p.plan.candidates[i];
    SCOPED_TRACE(c.description);
    std::string module = stitch::stitch(*p.b->graphs.at(0), {}, {}, {c.edit});
    verify::RegionCascadeResult r = verify::run_region_cascade(sup, *p.b, 0, profile::facts(p.regions[0]), module, o);
    ASSERT_TRUE(r.cascade.accepted) << results::cascade_json(r.cascade).dump(2);
    for (size_t g = 0; g < 3; ++g) EXPECT_EQ(r.cascade.gates[g].status, verify::GateStatus::passed);
    EXPECT_EQ(r.cascade.gates[1].evidence["outputs"], nlohmann::json::array({"buf3"}));
    for (const auto& run : r.cascade.gates[1].evidence["runs"]) EXPECT_TRUE(run["match"].get<bool>()) << run.dump();
    two_loops = module;
  }

  // The statistics swapped (the variance read as the mean): G2 sees every row wrong.
  std::string swapped = two_loops;
  size_t at = swapped.find("fuse_tmp1 = fuse_s0");
  ASSERT_NE(at, std::string::npos);
  swapped.replace(at, std::string("fuse_tmp1 = fuse_s0").size(), "fuse_tmp1 = fuse_s1");
  verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *p.b, 0, profile::facts(p.regions[0]), swapped, o);
  EXPECT_FALSE(bad.cascade.accepted);
  ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
  EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
}

TEST(FusionRowMerge, ColumnStatisticsMergeThroughTheStridedAnchor) {
  // Batch statistics over rows (tests/python/data, Inductor's form): the producer's "rows" are columns,
  // read at x0 + 160*r0_1; the consumer's element for column x, row r is that same address.
  Planned p = planned("tests/python/data/batch_stats_columns_inductor_form");
  const RegionCandidate* c = merged(p.plan);
  ASSERT_TRUE(c) << declines(p.plan);
  EXPECT_NE(c->edit.source.find("    fuse_xindex = x0 + 160*r0_1\n"), std::string::npos) << c->edit.source;
  EXPECT_NE(c->edit.source.find("    fuse_tmp0 = tmp0\n"), std::string::npos);  // the persistent row, reused

  // The same consumer reading the statistics along the wrong axis: declined, with where it went wrong.
  const ir::Artifact& a = *p.b->graphs.at(0);
  std::string src = a.module->source();
  size_t at = src.find("x0 = (xindex % 160)");
  ASSERT_NE(at, std::string::npos);
  src.replace(at, std::string("x0 = (xindex % 160)").size(), "x0 = (xindex // 96)");
  auto wrong = ir::build(src, "wrong axis");
  RegionPlan plan = plan_region(*wrong, *wrong->entry_function(), p.regions.at(0));
  EXPECT_FALSE(merged(plan));
  EXPECT_NE(declines(plan).find("the producer stored row"), std::string::npos) << declines(plan);

  // The variance returned as well: no longer internal, the producer still stores it, and the consumer's
  // read of it could overtake that store within a program (no barrier between the passes): declined.
  std::string ret = a.module->source();
  using Swap = std::pair<std::string, std::string>;
  for (auto [from, to] : {Swap{"        return (buf2, )", "        return (buf2, buf1, )"}, Swap{"            del buf1\n", ""}}) {
    size_t i = ret.find(from);
    ASSERT_NE(i, std::string::npos) << from;
    ret.replace(i, from.size(), to);
  }
  auto returned = ir::build(ret, "variance returned");
  auto rs = profile::regions(*returned, *returned->entry_function(), p.b->meta["graphs"][0]["args"]);
  ASSERT_EQ(rs.at(0).internal.size(), 1u);
  RegionPlan hazard = plan_region(*returned, *returned->entry_function(), rs.at(0));
  EXPECT_FALSE(merged(hazard));
  EXPECT_NE(declines(hazard).find("the consumer reads buf1, which the producer writes"), std::string::npos)
      << declines(hazard);
}

TEST(FusionRowMerge, DeclinesWithTheReason) {
  // A scan and a flip walk the same rows, but the scan's output is no per-row statistic.
  Planned p = planned("reverse_cumsum");
  EXPECT_FALSE(merged(p.plan));
  EXPECT_NE(declines(p.plan).find("row_merge"), std::string::npos) << declines(p.plan);
}
