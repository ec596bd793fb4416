// Access patterns the floor does not see (profile/access.h): a kernel that gathers through indices it
// loads is recognized, through any chain of assignments; one whose addresses come only from program
// ids and ranges is not.
#include "profile/access.h"

#include <gtest/gtest.h>

#include "pipeline/optimize_report.h"
#include "test_util.h"

using namespace kopt;
using kopt::testing::corpus;

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
