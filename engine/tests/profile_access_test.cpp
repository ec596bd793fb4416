// Access patterns the floor does not see (profile/access.h): a kernel that gathers through indices it
// loads is recognized, through any chain of assignments; one whose addresses come only from program
// ids and ranges is not.
#include "profile/access.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "pipeline/optimize_report.h"
#include "profile/roofline.h"
#include "test_util.h"

using namespace kopt;
using kopt::testing::corpus;
using nlohmann::json;

namespace {

ir::Kernel kernel(const std::string& name, const std::string& body) {
  ir::Kernel k;
  k.name = name;
  k.source = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef " + name + body;
  return k;
}

TEST(ProfileAccess, GathersThroughLoadedIndices) {
  // Inductor's cross-entropy: the loss kernel loads each row's target, then the logit at it.
  auto b = corpus("cross_entropy");
  const auto& ks = b->graphs[0]->kernels;
  auto by_name = [&](const std::string& n) {
    for (const auto& k : ks)
      if (k.name == n) return &k;
    ADD_FAILURE() << n;
    return &ks.at(0);
  };
  EXPECT_TRUE(profile::gathers(*by_name("triton_per_fused__log_softmax_nll_loss_forward_sub_1")));
  EXPECT_FALSE(profile::gathers(*by_name("triton_per_fused_prepare_softmax_online_0")));
  EXPECT_FALSE(profile::gathers(corpus("softmax_large")->graphs[0]->kernels.at(0)));
  // An embedding lookup: the index is loaded, wrapped for negatives, then used in the address.
  std::string lookup =
      "(in_ptr0, in_ptr1, out_ptr0, XBLOCK : tl.constexpr):\n"
      "    x0 = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]\n"
      "    r1 = tl.arange(0, 64)[None, :]\n"
      "    tmp0 = tl.load(in_ptr0 + (x0), None)\n"
      "    tmp1 = tmp0 + 1000\n"
      "    tmp2 = tl.where(tmp0 < 0, tmp1, tmp0)\n"
      "    tmp3 = tl.load(in_ptr1 + (r1 + 64*tmp2), None)\n"
      "    tl.store(out_ptr0 + (r1 + 64*x0), tmp3, None)\n";
  EXPECT_TRUE(profile::gathers(kernel("k", lookup)));
  // The same with the row from the program id: a loaded value used only as data is not a gather.
  std::string direct = lookup;
  direct.replace(direct.find("64*tmp2"), 7, "64*x0  ");
  EXPECT_FALSE(profile::gathers(kernel("k", direct)));
  // A source that does not parse has nothing to say.
  EXPECT_FALSE(profile::gathers(kernel("k", "(:\n")));
}

TEST(ProfileAccess, TheReportSaysWhyAGatherStaysAboveItsFloor) {
  agents::KernelProfile p;
  p.floor_ms = 0.1;
  ir::Kernel gather = kernel("k", "(in_ptr0, in_ptr1, out_ptr0):\n    i = tl.load(in_ptr0)\n"
                                  "    tl.store(out_ptr0, tl.load(in_ptr1 + i))\n");
  p.kernel = &gather;
  EXPECT_EQ(pipeline::above_floor_note(p, 0.15), "accepted at 1.50x its floor: it gathers through indices it loads, and the "
                                           "floor counts the gathered table once, which only a table that stays in L2 "
                                           "reaches");
  ir::Kernel plain = kernel("k", "(in_ptr0, out_ptr0):\n    tl.store(out_ptr0, tl.load(in_ptr0))\n");
  p.kernel = &plain;
  EXPECT_EQ(pipeline::above_floor_note(p, 0.14),
            "accepted at 1.40x its floor: the built-in agents found no faster safe variant in the budget");
}

}  // namespace

namespace {

json bf16(std::vector<int64_t> shape) { return kopt::testing::tensor(std::move(shape), "bfloat16"); }

// The launch of level 2's QKV projection + RoPE kernel (captured on an H100): the fused projection's
// 16384 x 12288 output, the cos and sin tables, the rotated q and k.
json rope_launch() {
  return {{"args", {bf16({16384, 12288}), bf16({2048, 128}), bf16({2048, 128}), bf16({8, 2048, 4096}),
                    bf16({8, 2048, 4096}), kopt::testing::value(67108864)}}};
}

}  // namespace

TEST(ProfileAccess, AKernelReadingTwoThirdsOfABufferTouchesTwoThirds) {
  auto b = ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/qkv_rope_bf16").string());
  const ir::Kernel& k = b->graphs.at(0)->kernels.at(0);
  // q and k: columns [0, 8192) of every row; the rotated halves' loads reach 64 columns past k's end
  // (masked there, counted: masks are not read), so 8256 of 12288 columns.
  EXPECT_EQ(profile::touched_elements(k, 0, rope_launch(), false), uint64_t{16384} * 8256);
  EXPECT_EQ(profile::touched_elements(k, 1, rope_launch(), false), uint64_t{2048} * 128);  // the whole table
  EXPECT_EQ(profile::touched_elements(k, 3, rope_launch(), true), uint64_t{67108864});     // flat stores
  // The floor: 8256/12288 of the projection read, the tables, both outputs written.
  profile::Cost c = profile::launch_cost(k, rope_launch());
  EXPECT_EQ(c.bytes_read, (uint64_t{16384} * 8256 + 2 * 2048 * 128) * 2);
  EXPECT_EQ(c.bytes_written, uint64_t{2} * 67108864 * 2);
}

TEST(ProfileAccess, FlatIndicesAndGathersCountTheStorage) {
  // A flat index over a contiguous 2-D tensor walks across its rows: all of it, not one row.
  ir::Kernel flat = kernel("k", R"((in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None)
    tl.store(out_ptr0 + (x0), tmp0, None)
)");
  flat.signature = {{"in_ptr0", "*fp32"}, {"out_ptr0", "*fp32"}, {"xnumel", "i32"}, {"XBLOCK", "constexpr", true}};
  json launch = {{"args", {kopt::testing::tensor({300, 1000}), kopt::testing::tensor({300, 1000}),
                           kopt::testing::value(300000)}}};
  EXPECT_EQ(profile::touched_elements(flat, 0, launch, false), uint64_t{300000});
  // An address through a loaded value: not counted here (the caller counts the storage).
  ir::Kernel gather = flat;
  gather.source = kopt::testing::replaced(flat.source, "tmp0 = tl.load(in_ptr0 + (x0), None)",
                                          "i = tl.load(out_ptr0 + (x0), None)\n    tmp0 = tl.load(in_ptr0 + (i), None)");
  EXPECT_EQ(profile::touched_elements(gather, 0, launch, false), std::nullopt);
  EXPECT_EQ(profile::launch_cost(gather, launch).bytes_read, uint64_t{300000} * 4 + uint64_t{300000} * 4);
}
