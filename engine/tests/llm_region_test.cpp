// The LLM coder's region unit (agents/coder/llm_region.h) without an endpoint: a reply's function
// read into a region candidate on corpus/group_norm — its declaration under Inductor's heuristics of
// the form it chose, its launch binding the buffers by name — and the replies it refuses, with why.
// The whole exchange against a scripted endpoint is tests/python/test_llm.py's.
#include <gtest/gtest.h>

#include "agents/coder/llm_region.h"
#include "profile/regions.h"
#include "stitch/stitch.h"
#include "verify/region_host.h"
#include "test_util.h"

using namespace kopt;
using kopt::testing::corpus;

namespace {

struct Unit {
  std::unique_ptr<ir::Bundle> b;
  std::vector<profile::Region> regions;
  agents::RegionUnit u;
};

Unit group_norm() {
  Unit x;
  x.b = corpus("group_norm");
  const ir::Artifact& a = *x.b->graphs.at(0);
  x.regions = profile::regions(a, *a.entry_function(), x.b->meta["graphs"][0]["args"]);
  x.u = {&a, a.entry_function(), &x.regions.at(0), 0, 0, {}};
  return x;
}

std::string fenced(const std::string& code) { return "```python\n" + code + "```\n"; }

// A pointwise form (no r0_numel): only its declaration and launch are looked at here (it copies the input, which
// G2 would reject).
const char* kPointwise = R"(def triton_region_g0_r0(arg2_1, arg0_1, arg1_1, buf3, xnumel, XBLOCK : tl.constexpr):
    xnumel = 65536
    e = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    m = e < xnumel
    x = tl.load(arg2_1 + e, m)
    tl.store(buf3 + e, x, m)
)";

}  // namespace

TEST(LlmRegion, APointwiseReplyIsDeclaredUnderPointwiseHeuristicsAndLaunchedByBufferName) {
  Unit x = group_norm();
  auto c = agents::llm_support::region_candidate(x.u, fenced(kPointwise));
  ASSERT_TRUE(c.value) << c.reason;
  const stitch::RegionEdit& e = c.value->edit;
  EXPECT_EQ(c.value->origin, "llm:region");
  EXPECT_EQ(e.kernel, "triton_region_g0_r0");
  EXPECT_EQ(e.args, "arg2_1, arg0_1, arg1_1, buf3, 65536");
  EXPECT_EQ(e.launches, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(e.internal, (std::vector<std::string>{"buf0", "buf1"}));
  for (const char* want : {"@triton_heuristics.pointwise(", "size_hints={'x': 65536},",
                           "'signature': {'arg2_1': '*fp32', 'arg0_1': '*fp32', 'arg1_1': '*fp32', 'buf3': '*fp32', "
                           "'xnumel': 'i32', 'XBLOCK': 'constexpr'}",
                           "'configs': [{}]", "'kernel_name': 'triton_region_g0_r0'"})
    EXPECT_NE(e.source.find(want), std::string::npos) << want << "\n" << e.source;
  EXPECT_EQ(e.source.find("reduction_hint"), std::string::npos);
  // G1's host check holds the stitched module to the region edit.
  const ir::Artifact& a = *x.b->graphs.at(0);
  verify::RegionG1 g1 = verify::check_region(a, profile::facts(x.regions[0]), stitch::stitch(a, {}, {}, {e}));
  for (const auto& finding : g1.g1.findings)
    if (finding.check == "host_code_edit" || finding.check == "fused_launch")
      EXPECT_TRUE(finding.passed) << finding.check << ": " << finding.message;
}

TEST(LlmRegion, RepliesThatDescribeNoRegionKernelAreRefusedWithWhy) {
  Unit x = group_norm();
  std::string src = kPointwise;
  auto reason = [&](const std::string& reply) {
    auto c = agents::llm_support::region_candidate(x.u, reply);
    EXPECT_FALSE(c.value);
    return c.reason;
  };
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string s = src;
    s.replace(s.find(from), from.size(), to);
    return fenced(s);
  };
  EXPECT_NE(reason("I would fuse them.").find("prose"), std::string::npos);
  EXPECT_NE(reason(edited("def triton_region_g0_r0(", "def fused(")).find("no top-level function triton_region_g0_r0"),
            std::string::npos);
  EXPECT_NE(reason(edited("buf3, xnumel", "buf3, buf1, xnumel")).find("buf1 names none"), std::string::npos);
  EXPECT_NE(reason(edited("    xnumel = 65536\n", "")).find("does not assign xnumel"), std::string::npos);
  EXPECT_NE(reason(edited("XBLOCK : tl.constexpr", "XBLOCK : tl.constexpr, YBLOCK : tl.constexpr"))
                .find("YBLOCK: only XBLOCK and R0_BLOCK"),
            std::string::npos);
  EXPECT_NE(reason(edited("XBLOCK : tl.constexpr", "XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr"))
                .find("r0_numel and R0_BLOCK come together"),
            std::string::npos);
}
