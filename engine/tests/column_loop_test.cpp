// The column loop (agents/coder/fusion/column_loop.h) on an RMS norm's normalize written in Inductor's form
// (tests/python/data/rms_norm_weight_inductor_form: 5 rows of 30011 floats, a weight as long as a row): the
// plan declines it at the fixture's size (its weight stays in L2), and with the bound lowered each block size
// passes G1-G3 with the CPU worker and compiles for sm_90; a loop that stops a row short fails G2.

#include <gtest/gtest.h>

#include "agents/coder/fusion/column_loop.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "verify/region_cascade.h"
#include "region_plan_util.h"
#include "test_util.h"

using namespace kopt;

namespace {

constexpr const char* kFixture = "tests/python/data/rms_norm_weight_inductor_form";

size_t pointwise_launch(const ir::Artifact& a) {
  const ir::Function& f = *a.entry_function();
  for (size_t i = 0; i < f.launches.size(); ++i)
    if (a.kernels[f.launches[i].kernel].kind == "pointwise") return i;
  return f.launches.size();
}

}  // namespace

TEST(ColumnLoop, TheNormalizeOfAnRmsNormWalksItsColumnsThroughEveryRow) {
  kopt::testing::Planned p = kopt::testing::plan(kFixture);
  // At the fixture's size the weight (30011 floats) stays in L2: declined, with its bytes.
  EXPECT_NE(kopt::testing::declined(p).find("column loop (triton_poi_fused_add_mean_mul_pow_rsqrt_2): its column operand "
                                      "(120044 bytes) stays in L2"),
            std::string::npos)
      << kopt::testing::declined(p);
  const ir::Artifact& a = p.art();
  size_t li = pointwise_launch(a);
  ASSERT_LT(li, a.entry_function()->launches.size());
  std::string why;
  auto made = agents::fusion::column_loop(a, *a.entry_function(), li, &why, {.min_column_bytes = 0});
  ASSERT_EQ(made.size(), 2u) << why;
  for (const auto& [description, edit] : made) {
    SCOPED_TRACE(description);
    EXPECT_NE(description.find("walk 5 rows of 30011 by columns"), std::string::npos);
    EXPECT_EQ(edit.args.substr(edit.args.rfind(", ") + 2), "30011");  // a program a block of columns
    EXPECT_NE(edit.source.find("for kopt_row in range(0, 5):"), std::string::npos) << edit.source;
    EXPECT_NE(edit.source.find("x1 = kopt_row + tl.zeros([XBLOCK], tl.int32)"), std::string::npos);
    EXPECT_EQ(edit.source.find("xindex // 30011"), std::string::npos);
    EXPECT_EQ(edit.source.find("xindex % 30011"), std::string::npos);
  }
  worker::Supervisor sup(kopt::testing::cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  std::vector<std::string> modules;
  for (const auto& [description, edit] : made) {
    modules.push_back(stitch::stitch(a, {}, {}, {edit}));
    verify::RegionCascadeResult r = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, modules.back(), o);
    EXPECT_TRUE(r.cascade.accepted) << description << "\n" << results::cascade_json(r.cascade).dump(2);
  }
  // The same kernel launched with the original's arguments is no relaunch: a kernel candidate, not a region's.
  std::string same = kopt::testing::replaced(modules[0], ", 30011, stream=", ", 150055, stream=");
  verify::RegionCascadeResult kernel_like = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, same, o);
  EXPECT_FALSE(kernel_like.cascade.accepted);
  EXPECT_NE(results::cascade_json(kernel_like.cascade).dump().find("relaunches none with other arguments"),
            std::string::npos);
  // The loop a row short: the last row's outputs stay poisoned.
  std::string bad = kopt::testing::replaced(modules[0], "for kopt_row in range(0, 5):", "for kopt_row in range(0, 4):");
  verify::RegionCascadeResult no = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, bad, o);
  EXPECT_FALSE(no.cascade.accepted);
  ASSERT_FALSE(no.cascade.gates.empty());
  EXPECT_EQ(no.cascade.gates.back().gate, "G2") << results::cascade_json(no.cascade).dump(2);
  kopt::testing::Compiled c = kopt::testing::compile_hopper(modules[1], "--kernel _cols");
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("compiled for sm_90"), std::string::npos) << c.out;
}

TEST(ColumnLoop, DeclinesWhatItCannotWalk) {
  // Reductions are the splits' (a looped kernel is not pointwise), and a pointwise kernel whose index has three
  // digits or none read by the column alone is left as it is.
  kopt::testing::Planned p = kopt::testing::plan(kFixture);
  const ir::Artifact& a = p.art();
  std::string why;
  EXPECT_TRUE(agents::fusion::column_loop(a, *a.entry_function(), 0, &why, {.min_column_bytes = 0}).empty());
  EXPECT_NE(why.find("not a pointwise kernel"), std::string::npos) << why;
  kopt::testing::Planned sig = kopt::testing::plan("corpus/sigmoid_residual");
  const ir::Artifact& s = sig.art();
  EXPECT_TRUE(agents::fusion::column_loop(s, *s.entry_function(), 0, &why, {.min_column_bytes = 0}).empty());
  EXPECT_FALSE(why.empty());
}
