// The axes a tiled kernel's loads and stores walk memory along (agents/coder/contiguity.h), and the
// config space's ranking by them, on a kernel captured on an H100: softmax over dim 0 of a bf16
// 97 x 735 x 14923 tensor stored transposed (a fresh draw's problem 03). Inductor's apply kernel reads
// along y and writes along z; its own config ran at 4.3x the kernel's floor, and the 48 configs
// screened in that run all had a z block of 1 or 2.
#include <gtest/gtest.h>

#include <filesystem>

#include "agents/coder/config_space.h"
#include "agents/coder/contiguity.h"
#include "test_util.h"

using namespace kopt;
using kopt::testing::tensor;
using kopt::testing::value;
using nlohmann::json;

namespace {

std::unique_ptr<ir::Bundle> transposed_softmax() {
  return ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/softmax_dim0_transposed_bf16").string());
}

json apply_launch() {
  json x = tensor({97, 735, 14923}, "bfloat16");
  x["stride"] = {10968405, 1, 735};
  return {{"args", {x, tensor({1, 735, 14923}), tensor({1, 735, 14923}), tensor({97, 735, 14923}, "bfloat16"),
                    value(14923), value(735), value(97)}}};
}

}  // namespace

TEST(Contiguity, ATransposeReadsAlongOneAxisAndWritesAlongAnother) {
  auto b = transposed_softmax();
  const ir::Kernel* k = b->graphs.at(0)->find_kernel("triton_poi_fused__softmax_exp_sub_1");
  ASSERT_NE(k, nullptr);
  // Three loads along y (the input, the two statistics), the store along z.
  std::vector<agents::ContiguousRun> want = {{"YBLOCK", 0}, {"YBLOCK", 0}, {"YBLOCK", 0}, {"ZBLOCK", 0}};
  EXPECT_EQ(agents::contiguous_runs(*k), want);
  // A wrapping digit keeps its radix: `x0 = xindex % 7` runs seven elements.
  ir::Kernel wrapped = *k;
  wrapped.source = kopt::testing::replaced(wrapped.source, "    y1 = yindex\n", "    y1 = yindex % 7\n");
  EXPECT_EQ(agents::contiguous_runs(wrapped).front(), (agents::ContiguousRun{"YBLOCK", 7}));
}

TEST(Contiguity, TheConfigSpaceRanksTilesASectorLongOnBothAxesFirst) {
  auto b = transposed_softmax();
  const ir::Kernel* k = b->graphs.at(0)->find_kernel("triton_poi_fused__softmax_exp_sub_1");
  ASSERT_NE(k, nullptr);
  std::string why;
  auto shape = agents::kernel_shape(*k, apply_launch(), &why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->elem_bytes, 2);
  auto space = agents::config_space(*shape);
  ASSERT_GE(space.size(), 48u);
  // What one screening round takes: every config's y and z blocks span a 32-byte sector of bf16.
  for (size_t i = 0; i < 48; ++i) {
    EXPECT_GE(space[i]["YBLOCK"].get<int64_t>(), 16) << space[i].dump();
    EXPECT_GE(space[i]["ZBLOCK"].get<int64_t>(), 16) << space[i].dump();
  }
  // Without the runs (as before), the first configs keep a z block of one or two.
  shape->contiguous.clear();
  auto blind = agents::config_space(*shape);
  EXPECT_LT(blind.front()["ZBLOCK"].get<int64_t>(), 16) << blind.front().dump();
}

TEST(Contiguity, AReductionOverAStridedAxisWalksXAndStartsItsR0BlocksAtOne) {
  // The same problem's statistics kernel: 97 rows of 10968405 contiguous columns, reduced over the
  // rows. Inductor ran it at XBLOCK=256, R0_BLOCK=2 (2.1x its floor); the space used to start R0 at
  // 16, and every config it screened was slower than Inductor's.
  auto b = transposed_softmax();
  const ir::Kernel* red = b->graphs.at(0)->find_kernel("triton_red_fused__softmax_prepare_softmax_online_0");
  ASSERT_NE(red, nullptr);
  json launch = {{"args", {tensor({97, 735, 14923}, "bfloat16"), tensor({1, 735, 14923}), tensor({1, 735, 14923}),
                           value(10968405), value(97)}}};
  auto shape = agents::kernel_shape(*red, launch, nullptr);
  ASSERT_TRUE(shape);
  // One load along x, two stores along x.
  EXPECT_EQ(shape->contiguous, (std::vector<agents::ContiguousRun>{{"XBLOCK", 0}, {"XBLOCK", 0}, {"XBLOCK", 0}}));
  EXPECT_TRUE(shape->strided_reduction);
  auto space = agents::config_space(*shape);
  ASSERT_GE(space.size(), 48u);
  // What one screening round takes: x runs that fill a warp's vector loads (256 bf16), R0 blocks from
  // 1, none padding the 97 rows past 128.
  bool small_r0 = false;
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_GE(space[i]["XBLOCK"].get<int64_t>(), 256) << space[i].dump();
    EXPECT_LE(space[i]["R0_BLOCK"].get<int64_t>(), 32) << space[i].dump();
    small_r0 = small_r0 || space[i]["R0_BLOCK"].get<int64_t>() < 16;
  }
  EXPECT_TRUE(small_r0);
  EXPECT_EQ(shape->row_passes, 1);
  // A two-pass one (statistics, then the outputs, rows read again): x runs of a sector are enough, as
  // narrower tiles keep the rows the second pass reads in L2.
  ir::Kernel two = *red;
  two.source = kopt::testing::replaced(two.source, "    tmp3, tmp4 = triton_helpers.online_softmax_reduce(",
                                       "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n        pass\n"
                                       "    tmp3, tmp4 = triton_helpers.online_softmax_reduce(");
  auto twice = agents::kernel_shape(two, launch, nullptr);
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->row_passes, 2);
  EXPECT_TRUE(twice->strided_reduction);
  auto two_space = agents::config_space(*twice);
  bool narrow = false;
  for (size_t i = 0; i < 40; ++i) narrow = narrow || two_space[i]["XBLOCK"].get<int64_t>() < 256;
  EXPECT_TRUE(narrow);
  // A reduction whose loads walk the reduced axis keeps R0 blocks of 16 and up.
  ir::Kernel inner = *red;
  inner.source = kopt::testing::replaced(inner.source, "in_ptr0 + (x0 + 10968405*r0_1)", "in_ptr0 + (r0_1 + 97*x0)");
  auto rows = agents::kernel_shape(inner, launch, nullptr);
  ASSERT_TRUE(rows);
  EXPECT_FALSE(rows->strided_reduction);
  for (const json& c : agents::config_space(*rows)) EXPECT_GE(c["R0_BLOCK"].get<int64_t>(), 16) << c.dump();
}

TEST(Contiguity, AScanOverAStridedAxisTiledOverYAndXStartsItsR0BlocksAtOne) {
  // A cumsum over dim 0 of a channels-last 67 x 5 x 11 x 13 tensor (captured on the CPU, torch 2.13):
  // Inductor's looped scan tiles the other axes as y (channels, contiguous in the input) and x
  // (contiguous in the output) and carries each chunk's last total into the next. No access walks r,
  // so a chunk of one row is a plain running total: the space starts R0 at 1. The same form over an
  // 8 GB bf16 tensor ran at 3.1x its floor with R0 blocks of 16 and up (an H100, session 32).
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/cumsum_dim0_channels_last_cpu").string());
  const ir::Kernel* scan = b->graphs.at(0)->find_kernel("triton_red_fused_cumsum_0");
  ASSERT_NE(scan, nullptr);
  json x = tensor({67, 5, 11, 13});
  x["stride"] = {715, 1, 65, 5};
  json launch = {{"args", {x, tensor({67, 5, 11, 13}), value(5), value(143), value(67)}}};
  auto shape = agents::kernel_shape(*scan, launch, nullptr);
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->contiguous, (std::vector<agents::ContiguousRun>{{"YBLOCK", 0}, {"XBLOCK", 0}}));
  EXPECT_TRUE(shape->strided_reduction);
  auto space = agents::config_space(*shape);
  bool one = false;
  for (const json& c : space) one = one || c["R0_BLOCK"].get<int64_t>() == 1;
  EXPECT_TRUE(one);
  // The same kernel reading its rows along r (a transposed input) keeps R0 blocks of 16 and up.
  ir::Kernel along_r = *scan;
  along_r.source = kopt::testing::replaced(along_r.source, "in_ptr0 + (y0 + 5*x1 + 715*r0_2)",
                                           "in_ptr0 + (r0_2 + 67*y0 + 335*x1)");
  auto rows = agents::kernel_shape(along_r, launch, nullptr);
  ASSERT_TRUE(rows);
  EXPECT_FALSE(rows->strided_reduction);
  for (const json& c : agents::config_space(*rows)) EXPECT_GE(c["R0_BLOCK"].get<int64_t>(), 16) << c.dump();
}
