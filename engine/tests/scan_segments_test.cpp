// The scan's segment split (agents/coder/fusion/scan_segments.h): a looped scan over a long axis with few
// column tiles becomes a totals launch and an apply launch joined by a scratch allocation. On Inductor kernels
// captured with its Triton backend (module's SM count an H200's): a cumprod over the outer axis of a transposed
// 3-D tensor (Grid2D tiles), a bf16 cumsum across memory (tiles of adjacent columns) and a logcumsumexp along
// memory (a row a program, a dozen-statement carry update). G1 takes each edit as written, the region cascade
// with the CPU worker passes them G1-G3, and an apply kernel that folds one segment too few fails G2.
#include <gtest/gtest.h>

#include <filesystem>

#include "agents/coder/fusion/fusion.h"
#include "agents/coder/fusion/scan_segments.h"
#include "artifact/bundle.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "verify/region_cascade.h"
#include "region_plan_util.h"
#include "test_util.h"

using namespace kopt;
namespace fs = std::filesystem;

namespace {

using kopt::testing::cpu_worker;
using kopt::testing::declined;
using kopt::testing::edited_copy;
using kopt::testing::failing;
using kopt::testing::of_origin;
using kopt::testing::plan;
using kopt::testing::Planned;
using kopt::testing::replaced;

const char* kOuter3d = "tests/python/data/cumprod_outer_3d_inductor_form";
const char* kColumns = "tests/python/data/cumsum_columns_bf16_inductor_form";
const char* kRows = "tests/python/data/logcumsumexp_rows_inductor_form";

std::vector<const agents::fusion::RegionCandidate*> splits(const Planned& p) {
  return of_origin(p, "split:scan_segments");
}

using Edits = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST(ScanSegments, AnOuterAxisCumprodOfA3dTensorBecomesTotalsAndApplyJoinedByAScratch) {
  Planned p = plan(kOuter3d);
  auto s = splits(p);
  ASSERT_GE(s.size(), 2u) << declined(p);
  const stitch::RegionEdit& e = s[0]->edit;
  EXPECT_EQ(e.launches, std::vector<size_t>{0});
  ASSERT_EQ(e.before.size(), 1u);
  EXPECT_EQ(e.before[0].kernel, "triton_red_fused_cumprod_0_seg_totals");
  EXPECT_EQ(e.kernel, "triton_red_fused_cumprod_0_seg_apply");
  // 41 x 43 columns in 2 x 2 tiles of 32 x 32; 132 SMs at 4 programs each want 132 segments, blocks of 4 steps
  // at least 4 a segment allow 18 of the 300 steps: segments of 20, 15 of them.
  EXPECT_NE(s[0]->description.find("1763 columns over 300 steps into 15 segments of 20 (60 programs a pass, tiles "
                                   "of 32 x 32 columns"),
            std::string::npos)
      << s[0]->description;
  // The grid's first dimension carries x tiles x segments (2 x 32 x 15 = 960 as xnumel), the second ynumel's tiles.
  EXPECT_EQ(e.args, "arg0_1, buf0, buf_seg0, 41, 960, 300");
  // The totals kernel drops the stores and starts each segment as the axis' first block; the apply kernel folds
  // the earlier segments' totals with the kernel's own update, its temporaries renamed.
  const std::string& totals = e.before[0].source;
  EXPECT_EQ(totals.find("tl.store(out_ptr0"), std::string::npos);
  EXPECT_NE(totals.find("tmp3 = tl.where(roffset > sseg * SEG, tmp6, tmp5)"), std::string::npos) << totals;
  EXPECT_NE(totals.find("tl.store(partials + (0 + (yindex * 43 + xindex) * NSEG + sseg), tmp3, xmask & ymask)"),
            std::string::npos)
      << totals;
  EXPECT_NE(e.source.find("for sj in tl.range(0, sseg):"), std::string::npos);
  EXPECT_NE(e.source.find("tmp6_seg = tmp3 * tmp5_seg"), std::string::npos) << e.source;
  EXPECT_NE(e.source.find("tmp3 = tl.where(sj > 0, tmp6_seg, tmp5_seg)"), std::string::npos) << e.source;
  EXPECT_NE(e.source.find("tl.store(out_ptr0"), std::string::npos);

  std::string module = stitch::stitch(p.art(), {}, {}, {e});
  EXPECT_NE(module.find("buf_seg0 = empty_strided_cpu((26445, ), (1, ), torch.float32)"), std::string::npos)
      << module;
  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, module);
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
  ASSERT_TRUE(g1.edit);
  EXPECT_EQ(stitch::stitch(p.art(), {}, {}, {*g1.edit}), module);  // G1's reading of the edit rebuilds it
}

TEST(ScanSegments, ColumnsAcrossMemoryTakeTilesAndRowsAlongItAProgramARow) {
  Planned cols = plan(kColumns);
  auto c = splits(cols);
  ASSERT_FALSE(c.empty()) << declined(cols);
  EXPECT_NE(c[0]->description.find("960 columns over 600 steps into 15 segments of 40 (225 programs a pass, tiles "
                                   "of 64 adjacent columns"),
            std::string::npos)
      << c[0]->description;
  EXPECT_NE(c[0]->edit.source.find("'XBLOCK': 64"), std::string::npos);

  Planned rows = plan(kRows);
  auto r = splits(rows);
  ASSERT_FALSE(r.empty()) << declined(rows);
  // Blocks of 1024 and at least 4 of them a segment: 12000 steps make two segments.
  EXPECT_NE(r[0]->description.find("4 rows of 12000 into 2 segments of 6144 (8 programs a pass, a row a program"),
            std::string::npos)
      << r[0]->description;
  // The whole carry update (minimum, maximum, isinf, log1p) folds a segment's total.
  EXPECT_NE(r[0]->edit.source.find("tmp14_seg = libdevice.log1p(tmp13_seg)"), std::string::npos) << r[0]->edit.source;
  for (const Planned* p : {&cols, &rows}) {
    const auto& e = splits(*p)[0]->edit;
    verify::RegionG1 g1 = verify::check_region(p->art(), p->facts, stitch::stitch(p->art(), {}, {}, {e}));
    EXPECT_TRUE(g1.g1.passed) << failing(g1);
  }
}

TEST(ScanSegments, DeclinesWithTheReason) {
  auto why = [](const fs::path& dir) {
    Planned p = plan(dir.string());
    EXPECT_TRUE(splits(p).empty());
    return declined(p);
  };
  // A carry updated otherwise than Inductor's `tl.where(roffset > 0, folded, total)`.
  Edits fold = {{"tmp3 = tl.where(roffset > 0, tmp6, tmp5)", "tmp3 = tmp6"}};
  EXPECT_NE(why(edited_copy(kOuter3d, "kopt_scan_fold", fold))
                .find("a carry not updated as `tl.where(roffset > 0, folded, block total)`"),
            std::string::npos);
  // An axis of 30 steps: blocks of 4 at least 4 a segment make one segment.
  Edits short_axis = {{"r0_numel = 300", "r0_numel = 30"}, {"43, 300, stream", "43, 30, stream"}};
  EXPECT_NE(why(edited_copy(kOuter3d, "kopt_scan_short", short_axis))
                .find("an axis of 30 too short for two segments"),
            std::string::npos);
  // A carry update that reads a lane of the block, not only its total.
  Edits lane = {{"tmp6 = triton_helpers.minimum(tmp3, tmp5)", "tmp6 = triton_helpers.minimum(tmp3, tmp5 + r0_1)"}};
  EXPECT_NE(why(edited_copy(kRows, "kopt_scan_lane", lane))
                .find("the carry update reads the block's lanes"),
            std::string::npos);
  // Not a scan at all: the reduction split answers for it.
  Planned softmax = plan("tests/python/data/softmax_rows_50k_small");
  EXPECT_TRUE(splits(softmax).empty());
  for (const char* d : {"kopt_scan_fold", "kopt_scan_short", "kopt_scan_lane"})
    fs::remove_all(fs::temp_directory_path() / d);
}

TEST(RegionCascadeWorker, ScanSplitsOfACumprodACumsumAndALogcumsumexpPassG1ToG3AndAMissingSegmentFails) {
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  for (const char* dir : {kOuter3d, kRows, kColumns}) {
    SCOPED_TRACE(dir);
    Planned p = plan(dir);
    auto s = splits(p);
    ASSERT_FALSE(s.empty());
    std::string module = stitch::stitch(p.art(), {}, {}, {s[0]->edit});
    verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, module, o);
    ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
    for (size_t g = 0; g < 3; ++g) EXPECT_EQ(ok.cascade.gates[g].status, verify::GateStatus::passed);
    if (std::string(dir) != kOuter3d) continue;
    // The apply kernel folds every earlier segment's total but the last: each segment after the first two is off.
    std::string short_fold = replaced(module, "for sj in tl.range(0, sseg):", "for sj in tl.range(0, sseg - 1):");
    verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, short_fold, o);
    EXPECT_FALSE(bad.cascade.accepted);
    ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
    EXPECT_EQ(bad.cascade.gates[0].status, verify::GateStatus::passed);
    EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
  }
}
