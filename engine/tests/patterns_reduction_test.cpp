// The axis-reduction generator (pattern:axis_reduction) on real corpus kernels: it proposes for
// reductions over an outer or middle axis (every instance passing G1) and declines reductions
// along the contiguous axis with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/agent.h"
#include "agents/coder/patterns/patterns.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "verify/static/g1.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace kopt;
using nlohmann::json;

namespace {

using kopt::testing::corpus;
using kopt::testing::tensor;
using kopt::testing::value;

agents::KernelProfile profile_of(const ir::Bundle& b, size_t kernel, std::vector<json> args) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[0]->kernels.at(kernel);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", args}}};
  return p;
}

std::vector<agents::Candidate> axis_reduction(const agents::KernelProfile& p, std::string* why) {
  return agents::patterns::instantiate("axis_reduction", p, why);
}

struct Case {
  const char* bundle;
  size_t kernel;
  std::vector<json> args;
  const char* inner;   // the digit the tile's inner coordinate stands for
  const char* reduce;  // the kernel's reduction, now along axis 0
};

}  // namespace

TEST(AxisReductionPattern, ProposesForOuterAndMiddleAxesAndPassesG1) {
  const Case cases[] = {
      // sum over dim 1 of 8x37x61: x0 + 61*r0_2 + 2257*x1.
      {"sum_middle_odd", 0, {tensor({8, 37, 61}), tensor({8, 61}), value(488), value(37)}, "x0 = kopt_inner",
       "tmp4 = tl.sum(tmp3, 0)[None, :]"},
      // amax over dim 0 of 19x24x33 (hint DEFAULT): x0 + 792*r0_1, one outer row of 792.
      {"amax_outer", 0, {tensor({19, 24, 33}), tensor({24, 33}), value(792), value(19)}, "x0 = xindex",
       "triton_helpers.max2(tmp3, 0)[None, :]"},
      // mean over dim 2 of 3x5x47x7: inner extent 7, the division epilogue kept.
      {"mean_dim2_4d", 0, {tensor({3, 5, 7}), tensor({3, 5, 47, 7}), value(105), value(47)}, "x0 = kopt_inner",
       "tmp6 = (tmp4 / tmp5)"},
      // argmin over dim 1 of 6x41x35: the first index among equal minima, the kernel's own helper.
      {"argmin_middle", 0, {tensor({6, 41, 35}), tensor({6, 35}, "int64"), value(210), value(41)}, "x1 = kopt_outer",
       "triton_helpers.min_with_index(tmp3, tmp4, 0)"},
      // mean over dim 0 of 256x256, Inductor's split: partial sums over row chunks, then their mean.
      {"mean_dim0", 0, {tensor({256, 256}), tensor({512}), value(512), value(128)}, "x1 = kopt_outer",
       "tmp2 = tl.sum(_tmp2, 0)[None, :]"},
      {"mean_dim0", 1, {tensor({256}), tensor({2, 256}), value(256), value(2)}, "x0 = xindex",
       "tmp4 = tl.sum(tmp3, 0)[None, :]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bundle);
    auto b = corpus(c.bundle);
    auto p = profile_of(*b, c.kernel, c.args);
    std::string why;
    auto cands = axis_reduction(p, &why);
    ASSERT_FALSE(cands.empty()) << why;
    EXPECT_LE(cands.size(), 24u);
    for (const auto& cand : cands) {
      EXPECT_EQ(cand.origin, "pattern:axis_reduction");
      EXPECT_NE(cand.source.find(c.inner), std::string::npos) << cand.source;
      EXPECT_NE(cand.source.find(c.reduce), std::string::npos) << cand.source;
      EXPECT_NE(cand.source.find("xindex = kopt_outer * "), std::string::npos);
      EXPECT_EQ(cand.source.find("xoffset"), std::string::npos);
      EXPECT_TRUE(verify::run_g1(*p.kernel, cand.source).passed) << cand.description;
    }
    // A narrow inner axis (7): first one outer row by all of it, so a tile is one contiguous run of the row.
    if (std::string(c.bundle) == "mean_dim2_4d")
      EXPECT_NE(cands.front().description.find("1 outer x 8 inner (of 7)"), std::string::npos)
          << cands.front().description;
    if (const char* dir = std::getenv("KOPT_DUMP_TEMPLATES"))
      std::ofstream(fs::path(dir) / (std::string("axis_reduction_") + c.bundle + ".py")) << cands.front().source;
  }
}

TEST(AxisReductionPattern, DeclinesReductionsAlongTheContiguousAxis) {
  const Case cases[] = {
      {"row_sum_long", 0, {tensor({32, 16384}), tensor({64}), value(64), value(8192)}, "", ""},
      {"row_sum_long", 1, {tensor({64}), tensor({32}), value(32), value(2)}, "", ""},
      {"argmax_dim", 0, {tensor({128, 512}), tensor({128}, "int64"), value(128), value(512)}, "", ""},
      {"min_dim", 0, {tensor({128, 512}), tensor({128}), tensor({128}, "int64"), value(128), value(512)}, "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bundle);
    auto b = corpus(c.bundle);
    auto p = profile_of(*b, c.kernel, c.args);
    std::string why;
    EXPECT_TRUE(axis_reduction(p, &why).empty());
    EXPECT_NE(why.find("a reduction along the contiguous axis"), std::string::npos) << why;
    EXPECT_NE(why.find("stride 1"), std::string::npos) << why;
  }
  // Not a reduction at all.
  auto g = corpus("gelu_scale");
  auto p = profile_of(*g, 0, {});
  std::string why;
  EXPECT_TRUE(axis_reduction(p, &why).empty());
  EXPECT_EQ(why, "not a reduction kernel");
}

TEST(AxisReductionPattern, TakesInductorsSixtyFourBitIndexingForm) {
  // amax over dim 0 of 19x24x33 as Inductor writes it for tensors past 2^31 elements: the program id widened
  // before it is scaled, the lanes widened too.
  fs::path dir = fs::temp_directory_path() / "kopt_axis_int64";
  fs::remove_all(dir);
  fs::copy(fs::path(KOPT_SOURCE_DIR) / "corpus" / "amax_outer", dir, fs::copy_options::recursive);
  std::stringstream ss;
  ss << std::ifstream(dir / "module_0.py").rdbuf();
  std::string text = ss.str();
  for (auto [from, to] : {std::pair<std::string, std::string>{"xoffset = tl.program_id(0) * XBLOCK",
                                                              "xoffset = tl.program_id(0).to(tl.int64) * XBLOCK"},
                          {"xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n",
                           "xindex = xoffset + tl.arange(0, XBLOCK)[:, None].to(tl.int64)\n"}}) {
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  std::ofstream(dir / "module_0.py") << text;
  auto b = ir::load_bundle(dir.string());
  auto p = profile_of(*b, 0, {tensor({19, 24, 33}), tensor({24, 33}), value(792), value(19)});
  std::string why;
  auto cands = axis_reduction(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& cand : cands) {
    EXPECT_NE(cand.source.find("kopt_pid = tl.program_id(0).to(tl.int64)"), std::string::npos) << cand.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, cand.source).passed) << cand.description;
  }
  fs::remove_all(dir);
}
