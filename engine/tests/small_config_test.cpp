// Which blocks G2's small config shrinks (verify/small_config.h), on corpus kernels.
#include <gtest/gtest.h>

#include "artifact/pin_config.h"
#include "test_util.h"
#include "verify/order_probe.h"
#include "verify/small_config.h"

using namespace kopt;
using nlohmann::json;

namespace {

const ir::Kernel& kernel(const ir::Bundle& b, const std::string& name) {
  const ir::Kernel* k = b.graphs.at(0)->find_kernel(name);
  EXPECT_NE(k, nullptr) << name;
  return *k;
}

TEST(SmallConfig, PointwiseXblockShrinksToSeveralPrograms) {
  auto b = kopt::testing::corpus("gelu_scale");
  const ir::Kernel& k = kernel(*b, "triton_poi_fused_add_gelu_mul_0");  // size_hints x: 65536
  // Half the numel (two programs) is above the tile budget of 4096: 16 programs.
  EXPECT_EQ(verify::small_config(k, k.source),
            (json{{"XBLOCK", 4096}, {"num_warps", 4}, {"num_stages", 1}}));
  // Pinned to a block that already gives many programs: nothing to shrink, no extra run.
  EXPECT_EQ(verify::small_config(k, ir::pin_config(k.source, k.name, {{"XBLOCK", 256}, {"num_warps", 4}})),
            std::nullopt);
}

TEST(SmallConfig, LoopedReductionShrinksXblockAndItsLoopStep) {
  auto b = kopt::testing::corpus("row_sum_long");
  const ir::Kernel& k = kernel(*b, "triton_red_fused_sum_0");  // x: 64, r0_: 8192, `tl.range(0, r0_numel, R0_BLOCK)`
  // Halves (32 x 4096) pass the tile budget of 4096: the larger block halves until the tile fits.
  EXPECT_EQ(verify::small_config(k, k.source),
            (json{{"XBLOCK", 32}, {"R0_BLOCK", 128}, {"num_warps", 4}, {"num_stages", 1}}));
  // Through an alias of the block, as Inductor writes `RBLOCK: tl.constexpr = R0_BLOCK`.
  std::string aliased = kopt::testing::replaced(kopt::testing::replaced(k.source, "tl.range(0, r0_numel, R0_BLOCK)",
                                                            "tl.range(0, r0_numel, RB)"),
                                          "    xoffset", "    RB: tl.constexpr = R0_BLOCK\n    xoffset");
  EXPECT_EQ(verify::small_config(k, aliased).value()["R0_BLOCK"], 128);
}

TEST(SmallConfig, PersistentReductionKeepsItsRowBlock) {
  // Modern persistent reductions set R0_BLOCK in the body: only XBLOCK is a parameter.
  auto b = kopt::testing::corpus("softmax_lastdim");
  const ir::Kernel& k = kernel(*b, "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0");  // x: 128
  EXPECT_EQ(verify::small_config(k, k.source), (json{{"XBLOCK", 64}, {"num_warps", 4}, {"num_stages", 1}}));
  // A candidate that covers the row in one block (no loop over R0_BLOCK) keeps it: at its pinned value,
  // or the whole row's power of two.
  auto r = kopt::testing::corpus("row_sum_long");
  const ir::Kernel& red = kernel(*r, "triton_red_fused_sum_0");
  std::string one_block = kopt::testing::replaced(red.source, "tl.range(0, r0_numel, R0_BLOCK)", "tl.range(0, 1)");
  // The row block alone is above the tile budget: XBLOCK goes down to one row a program, no further.
  EXPECT_EQ(verify::small_config(red, one_block),
            (json{{"XBLOCK", 1}, {"R0_BLOCK", 8192}, {"num_warps", 4}, {"num_stages", 1}}));
  std::string pinned = ir::pin_config(one_block, red.name, {{"XBLOCK", 64}, {"R0_BLOCK", 1024}, {"num_warps", 8}});
  EXPECT_EQ(verify::small_config(red, pinned),
            (json{{"XBLOCK", 4}, {"R0_BLOCK", 1024}, {"num_warps", 8}, {"num_stages", 1}}));
}

TEST(SmallConfig, NoBlockParametersNoSmallRun) {
  // A template's blocks are constants of its source, and it computes its own grid.
  auto b = kopt::testing::corpus("matmul__max-autotune-no-cudagraphs");
  const ir::Kernel& k = kernel(*b, "triton_tem_fused_mm_0");
  EXPECT_EQ(verify::small_config(k, k.source), std::nullopt);
  // A pointwise kernel of one element: no block can give two programs.
  ir::Kernel one = kernel(*kopt::testing::corpus("gelu_scale"), "triton_poi_fused_add_gelu_mul_0");
  one.size_hints = {{"x", 1}};
  EXPECT_EQ(verify::small_config(one, one.source), std::nullopt);
}

}  // namespace

// G2's order probe (verify/order_probe.h): the original's own source under other blockings.
TEST(OrderProbe, ConfigsRegroupTheOriginal) {
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "tests/python/data/cumsum_split_scan_small").string());
  const ir::Kernel& scan = kernel(*b, "triton_spl_fused_cumsum_0");  // min_split_scan_rblock 256, r0_ hint 65536
  EXPECT_EQ(verify::order_probes(scan),
            (std::vector<json>{{{"R0_BLOCK", 256}, {"num_warps", 4}, {"num_stages", 1}},
                               {{"R0_BLOCK", 1024}, {"num_warps", 4}, {"num_stages", 1}}}));
  // A candidate pinned to segments of 4096 is also probed by the original's segments of 2048 and 8192
  // (never 4096: that would be the candidate's own grouping).
  std::string pinned = ir::pin_config(scan.source, scan.name, {{"R0_BLOCK", 4096}, {"num_warps", 2}, {"num_stages", 1}});
  std::vector<int64_t> blocks;
  for (const json& c : verify::order_probes(scan, pinned)) blocks.push_back(c["R0_BLOCK"].get<int64_t>());
  EXPECT_EQ(blocks, (std::vector<int64_t>{256, 1024, 2048, 8192}));
  // Segments of 512: its half is the smallest already there.
  blocks.clear();
  pinned = ir::pin_config(scan.source, scan.name, {{"R0_BLOCK", 512}, {"num_warps", 2}, {"num_stages", 1}});
  for (const json& c : verify::order_probes(scan, pinned)) blocks.push_back(c["R0_BLOCK"].get<int64_t>());
  EXPECT_EQ(blocks, (std::vector<int64_t>{256, 1024}));
  auto r = kopt::testing::corpus("row_sum_long");
  const ir::Kernel& red = kernel(*r, "triton_red_fused_sum_0");
  EXPECT_EQ(verify::order_probes(red), (std::vector<json>{*verify::small_config(red, red.source)}));
}

TEST(OrderProbe, TheCandidatesDifferencesWithinTheOriginalsOwn) {
  auto arg = [](int i, bool ok, bool finite_ok, bool nan_match, bool inf_match, double max_abs) {
    return json{{"arg", i},          {"ok", ok}, {"finite_ok", finite_ok}, {"nan_positions_match", nan_match},
                {"inf_positions_match", inf_match}, {"max_abs", max_abs}};
  };
  auto cmp = [](std::initializer_list<json> args) { return json{{"args", json::array_t(args)}}; };
  // NaN positions differing, finite elements agreeing: covered by a probe whose NaN positions differ too.
  json nan_only = cmp({arg(0, true, true, true, true, 0), arg(1, false, true, false, true, 0)});
  EXPECT_TRUE(verify::positions_differ(nan_only));
  EXPECT_TRUE(verify::within_order_sensitivity(nan_only, cmp({arg(1, false, true, false, true, 0)})));
  EXPECT_TRUE(verify::within_order_sensitivity(nan_only, cmp({arg(1, false, true, true, false, 0)})));  // Inf
  EXPECT_FALSE(verify::within_order_sensitivity(nan_only, cmp({arg(1, true, true, true, true, 0)})));  // kept
  EXPECT_FALSE(verify::within_order_sensitivity(nan_only, cmp({arg(0, false, false, true, true, 5)})));  // other arg
  // Finite differences beyond tolerance: covered only by a probe differing at least half as much.
  json finite = cmp({arg(1, false, false, true, true, 0.4)});
  EXPECT_FALSE(verify::positions_differ(finite));
  EXPECT_TRUE(verify::within_order_sensitivity(finite, cmp({arg(1, false, false, true, true, 0.3)})));
  EXPECT_TRUE(verify::within_order_sensitivity(finite, cmp({arg(1, false, false, true, true, 0.2)})));
  EXPECT_FALSE(verify::within_order_sensitivity(finite, cmp({arg(1, false, false, true, true, 0.1)})));
  EXPECT_FALSE(verify::within_order_sensitivity(finite, cmp({arg(1, false, true, false, true, 0.0)})));
  // A candidate differing in NaN positions is not covered by a probe differing in finite values alone.
  EXPECT_FALSE(verify::within_order_sensitivity(nan_only, cmp({arg(1, false, false, true, true, 9)})));
  // Integers never; nothing differing, nothing to cover.
  json int_arg = {{"arg", 0}, {"ok", false}, {"mismatched", 3}};
  json ints = {{"args", json::array({int_arg})}};
  EXPECT_FALSE(verify::within_order_sensitivity(ints, ints));
  EXPECT_FALSE(verify::within_order_sensitivity(cmp({arg(0, true, true, true, true, 0)}), finite));
}
