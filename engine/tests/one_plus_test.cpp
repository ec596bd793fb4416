// GELU's 1 + erf / 1 + tanh in closed forms (agents/coder/rewrites/one_plus.h): which sums it rewrites, what
// it leaves, and that the result passes G1.
#include <gtest/gtest.h>

#include "agents/coder/rewrites/one_plus.h"
#include "artifact/bundle.h"
#include "verify/static/g1.h"
#include "test_util.h"

using namespace kopt;
using kopt::testing::corpus;
using kopt::testing::replaced;

namespace {

const ir::Kernel& gelu(const std::unique_ptr<ir::Bundle>& b) { return b->graphs[0]->kernels.at(0); }

}  // namespace

TEST(OnePlus, RewritesTheExactGeluSumAndPassesG1) {
  auto b = corpus("gelu_scale");
  const ir::Kernel& k = gelu(b);
  std::string why;
  auto out = agents::rewrites::one_plus(k.source, k.name, agents::rewrites::stores_half_only(k), &why);
  ASSERT_TRUE(out) << why;
  EXPECT_EQ(out->erf, 1);
  EXPECT_EQ(out->tanh, 0);
  EXPECT_EQ(out->source.find("libdevice.erf("), std::string::npos);
  // The sum `tmp7 = tmp5 + tmp6` is the closed form of erfc(-tmp4); the rest of the kernel is as it was.
  EXPECT_NE(out->source.find("tmp7 = tl.where(tmp4 >= 0, 2.0 - _kopt_c0, _kopt_c0)"), std::string::npos) << out->source;
  EXPECT_NE(out->source.find("_kopt_z0 = tl.abs(tmp4)"), std::string::npos);
  EXPECT_NE(out->source.find("tmp8 = tmp2 * tmp7"), std::string::npos);
  EXPECT_TRUE(verify::run_g1(k, out->source).passed);
}

TEST(OnePlus, RewritesTheTanhGeluSumAsTwiceASigmoid) {
  auto b = corpus("gelu_scale");
  const ir::Kernel& k = gelu(b);
  std::string src = replaced(k.source, "libdevice.erf(tmp4)", "libdevice.tanh(tmp4)");
  std::string why;
  auto out = agents::rewrites::one_plus(src, k.name, false, &why);
  ASSERT_TRUE(out) << why;
  EXPECT_EQ(out->tanh, 1);
  EXPECT_NE(out->source.find("_kopt_s0 = 2.0 / (1.0 + tl.exp(-2.0 * tmp4))"), std::string::npos) << out->source;
  EXPECT_NE(out->source.find("tmp7 = _kopt_s0"), std::string::npos);
  EXPECT_TRUE(verify::run_g1(k, out->source).passed);
}

TEST(OnePlus, LeavesAnErfUsedOtherwiseAndFloat64Kernels) {
  auto b = corpus("gelu_scale");
  const ir::Kernel& k = gelu(b);
  std::string why;
  // The erf also scaled on its own: its value is needed, so nothing is rewritten.
  std::string other = replaced(k.source, "tmp8 = tmp2 * tmp7", "tmp8 = tmp2 * tmp7 + tmp5");
  EXPECT_FALSE(agents::rewrites::one_plus(other, k.name, false, &why));
  EXPECT_NE(why.find("used other than as 1 + value"), std::string::npos) << why;
  // Added to 2, not 1.
  std::string two = replaced(k.source, "tmp6 = tl.full([1], 1.0, tl.float32)", "tmp6 = tl.full([1], 2.0, tl.float32)");
  EXPECT_FALSE(agents::rewrites::one_plus(two, k.name, false, &why));
  // A float64 kernel: the fit is a float32 one.
  std::string f64 = replaced(k.source, "'in_ptr0': '*fp32'", "'in_ptr0': '*fp64'");
  EXPECT_FALSE(agents::rewrites::one_plus(f64, k.name, false, &why));
  EXPECT_NE(why.find("float64"), std::string::npos) << why;
}

TEST(OnePlus, AKernelStoringOnlyBf16GetsTheRationalFit) {
  auto b = corpus("linear_gelu_bf16");
  const ir::Kernel& k = gelu(b);
  std::string why;
  auto out = agents::rewrites::one_plus(k.source, k.name, agents::rewrites::stores_half_only(k), &why);
  ASSERT_TRUE(out) << why;
  EXPECT_TRUE(out->half_fit);
  EXPECT_EQ(out->erf, 1);
  // erfc(|v|) = P(|v|)^-16: four squarings and a reciprocal, no exp.
  EXPECT_EQ(out->source.find("tl.exp("), std::string::npos) << out->source;
  EXPECT_NE(out->source.find("_kopt_c0 = 1.0 / (_kopt_p0 * _kopt_p0)"), std::string::npos) << out->source;
  EXPECT_NE(out->source.find("tmp8 = tl.where(tmp5 >= 0, 2.0 - _kopt_c0, _kopt_c0)"), std::string::npos);
  EXPECT_TRUE(verify::run_g1(k, out->source).passed);
  // The fp32 GELU keeps the exp form (its output has float32's precision).
  auto f = corpus("gelu_scale");
  EXPECT_FALSE(agents::rewrites::stores_half_only(gelu(f)));
  auto f32 = agents::rewrites::one_plus(gelu(f).source, gelu(f).name, agents::rewrites::stores_half_only(gelu(f)), &why);
  ASSERT_TRUE(f32) << why;
  EXPECT_FALSE(f32->half_fit);
}
