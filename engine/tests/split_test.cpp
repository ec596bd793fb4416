// The segment split (agents/coder/fusion/split.h): a looped reduction over few long rows becomes a
// statistics launch and an apply launch joined by a scratch allocation. Its host edit (stitch/region.h),
// G1's check of it (verify/region_host.h) against honest and hostile modules, its declines, and the
// region cascade with the CPU worker on captured Inductor kernels: an online softmax (two
// accumulators) and a Welford layer norm (three) pass G1-G3; an apply kernel that reads one segment's
// partials fails G2.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/fusion/fusion.h"
#include "agents/coder/fusion/split.h"
#include "agents/coder/fusion/tile_addresses.h"
#include "artifact/bundle.h"
#include "results/record.h"
#include "search/cost.h"
#include "search/regions.h"
#include "stitch/stitch.h"
#include "verify/end_to_end.h"
#include "verify/region_cascade.h"
#include "region_plan_util.h"
#include "test_util.h"

using namespace kopt;
namespace fs = std::filesystem;

namespace {

using kopt::testing::cpu_worker;
using kopt::testing::declined;
using kopt::testing::failing;
using kopt::testing::of_origin;
using kopt::testing::plan;
using kopt::testing::Planned;
using kopt::testing::replaced;

std::unique_ptr<ir::Bundle> load(const std::string& dir) {
  return ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / dir).string());
}

std::vector<const agents::fusion::RegionCandidate*> splits(const Planned& p) {
  return of_origin(p, "split:segments");
}

const char* kSoftmax = "tests/python/data/softmax_rows_50k_small";
const char* kLayerNorm = "tests/python/data/layer_norm_few_rows_inductor_form";
const char* kColumns = "tests/python/data/softmax_columns_inductor_form";
const char* kL1Columns = "tests/python/data/l1_normalize_columns_fp16_inductor_form";
const char* kTransposedOut = "tests/python/data/softmax_transposed_out_bf16_inductor_form";
const char* kSoftmaxKernel = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0";

}  // namespace

TEST(SegmentSplit, AnOnlineSoftmaxOfFourRowsBecomesTwoLaunchesJoinedByAScratch) {
  Planned p = plan(kSoftmax);
  auto s = splits(p);
  ASSERT_GE(s.size(), 2u);  // two block sizes at least
  const stitch::RegionEdit& e = s[0]->edit;
  EXPECT_EQ(e.launches, std::vector<size_t>{0});
  EXPECT_TRUE(e.internal.empty());
  ASSERT_EQ(e.before.size(), 1u);
  EXPECT_EQ(e.before[0].kernel, std::string(kSoftmaxKernel) + "_seg_stats");
  EXPECT_EQ(e.kernel, std::string(kSoftmaxKernel) + "_seg_apply");
  // 132 SMs: 4 rows of 50304 in 25 segments of 2048, two partials (max, sum of exp) a segment.
  EXPECT_NE(s[0]->description.find("4 rows of 50304 into 25 segments of 2048"), std::string::npos)
      << s[0]->description;
  std::string module = stitch::stitch(p.art(), {}, {}, {e});
  size_t alloc = module.find("buf_seg0 = empty_strided_cuda((200, ), (1, ), torch.float32)\n");
  size_t stats = module.find(std::string(kSoftmaxKernel) + "_seg_stats.run(arg0_1, buf2, buf_seg0, 100, 50304, "
                                                           "stream=stream0)\n");
  size_t apply = module.find(std::string(kSoftmaxKernel) + "_seg_apply.run(arg0_1, buf2, buf_seg0, 100, 50304, "
                                                           "stream=stream0)\n");
  size_t del = module.find("del buf_seg0\n");
  ASSERT_NE(alloc, std::string::npos) << module;
  EXPECT_LT(alloc, stats);
  EXPECT_LT(stats, apply);
  EXPECT_LT(apply, del);
  EXPECT_EQ(module.find(std::string(kSoftmaxKernel) + ".run("), std::string::npos);  // the original launch is gone

  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, module);
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
  ASSERT_TRUE(g1.edit);
  EXPECT_EQ(g1.edit->before.size(), 1u);
  ASSERT_EQ(g1.edit->scratch.size(), 1u);
  EXPECT_EQ(g1.edit->scratch[0].name, "buf_seg0");
  EXPECT_EQ(stitch::stitch(p.art(), {}, {}, {*g1.edit}), module);  // G1's reading of the edit rebuilds it
}

TEST(SegmentSplit, ColumnsAcrossMemoryAreSplitInTilesOfAdjacentColumns) {
  Planned p = plan(kColumns);
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  // 64 columns of 9000 (`x0 + 64*r0_1`): one tile of 64 columns, at most 64 segments of whole 32-row blocks.
  EXPECT_NE(s[0]->description.find("64 rows of 9000 into 57 segments of 160 (57 programs a pass, tiles of 64 "
                                   "adjacent rows"),
            std::string::npos)
      << s[0]->description;
  EXPECT_NE(s[0]->edit.source.find("'XBLOCK': 64"), std::string::npos);
  std::string module = stitch::stitch(p.art(), {}, {}, {s[0]->edit});
  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, module);
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
}

TEST(SegmentSplit, ColumnsThatDoNotFillTheTilesSplitUnderTheKernelsOwnRowMask) {
  // Draw 26206's row 45 shrunk (an L1 normalize down 22760 fp16 columns of 32768, 356 tiles of 64: 2.4x the
  // bytes' time): 100 columns, their masked second tile as Inductor's `xmask = xindex < xnumel` has it.
  Planned p = plan(kL1Columns);
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s[0]->description.find("split 100 rows of 8192 into 64 segments of 128 (128 programs a pass, tiles of "
                                   "64 adjacent rows"),
            std::string::npos)
      << s[0]->description;
  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, stitch::stitch(p.art(), {}, {}, {s[0]->edit}));
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
}

TEST(SegmentSplit, ARowReadAlongMemoryAndWrittenAcrossItIsAppliedInTilesOfRows) {
  // Draw 26206's row 09 shrunk (a softmax over dim 0 of a transposed 351887 x 512 bf16 tensor into a contiguous
  // output): a program a row stored 2 of every 32 bytes it wrote (5.5 ms against Inductor's 1.64). The
  // statistics still take a row a program (they only read along); the apply launch tiles of 32 rows, blocks of 64.
  Planned p = plan(kTransposedOut);
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s[0]->description.find("split 96 rows of 9001 into 5 segments of 2048 (statistics: 480 programs, a row "
                                   "each; then the row: 15 programs, tiles of 32 rows read along and written across)"),
            std::string::npos)
      << s[0]->description;
  const stitch::RegionEdit& e = s[0]->edit;
  ASSERT_EQ(e.before.size(), 1u);
  EXPECT_NE(e.before[0].source.find("'XBLOCK': 1,"), std::string::npos);
  EXPECT_NE(e.source.find("'XBLOCK': 32, 'R0_BLOCK': 64"), std::string::npos) << e.source;
  EXPECT_EQ(e.before[0].args, "arg0_1, buf2, buf_seg0, 480, 9001");
  EXPECT_EQ(e.args, "arg0_1, buf2, buf_seg0, 480, 9001");  // 3 tiles of 32 x 5 segments, as xnumel
  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, stitch::stitch(p.art(), {}, {}, {e}));
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
}

TEST(SegmentSplit, DeclinesManyRowsPersistentKernelsAndShortRowsWithTheReason) {
  Planned many = plan("corpus/softmax_large");  // 8192 rows: every SM busy already
  EXPECT_TRUE(splits(many).empty());
  EXPECT_NE(declined(many).find("8192 rows already keep 132 SMs busy"), std::string::npos) << declined(many);
  Planned persistent = plan("corpus/softmax_lastdim");
  EXPECT_TRUE(splits(persistent).empty());
  EXPECT_NE(declined(persistent).find("not a looped kernel"), std::string::npos) << declined(persistent);
}

TEST(SegmentSplit, G1RejectsAHugeScratchAScratchWrittenElsewhereAndAnyOtherHostEdit) {
  Planned p = plan(kSoftmax);
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  std::string module = stitch::stitch(p.art(), {}, {}, {s[0]->edit});
  auto check = [&](const std::string& m) { return verify::check_region(p.art(), p.facts, m); };

  verify::RegionG1 huge =
      check(replaced(module, "((200, ), (1, ), torch.float32)", "((100000000, ), (1, ), torch.float32)"));
  EXPECT_FALSE(huge.g1.passed);
  EXPECT_EQ(failing(huge).rfind("host_code_edit: line", 0), 0u) << failing(huge);
  EXPECT_NE(failing(huge).find("400000000 bytes"), std::string::npos) << failing(huge);

  // The statistics kernel writes its partials into the model's input instead.
  verify::RegionG1 into_input = check(replaced(module, "tl.store(partials + (", "tl.store(in_ptr0 + ("));
  EXPECT_FALSE(into_input.g1.passed);
  EXPECT_EQ(failing(into_input).rfind("fused_launch:", 0), 0u) << failing(into_input);
  EXPECT_NE(failing(into_input).find("writes arg0_1"), std::string::npos) << failing(into_input);

  // One more host statement than the split's edit.
  size_t del = module.find("del buf_seg0\n"), line = module.rfind('\n', del) + 1;
  std::string indent = module.substr(line, del - line);
  verify::RegionG1 extra = check(replaced(module, indent + "del buf_seg0\n",
                                          indent + "buf_seg0.zero_()\n" + indent + "del buf_seg0\n"));
  EXPECT_FALSE(extra.g1.passed);
  EXPECT_EQ(failing(extra).rfind("host_code_edit:", 0), 0u) << failing(extra);
}

// row_sum_long: Inductor's own split of a long row sum (partial sums of 64 rows of 8192, then their sum): its first
// kernel, one loop and a store after it, split again inside the two-launch region (the internal buffer it writes
// kept, read by the second launch).
TEST(RegionCascadeWorker, SplitsOfALayerNormASoftmaxAColumnSoftmaxAndARowSumPassG1ToG3AndABadApplyFails) {
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  for (const char* dir : {kLayerNorm, kSoftmax, kColumns, kL1Columns, kTransposedOut, "corpus/row_sum_long"}) {
    SCOPED_TRACE(dir);
    Planned p = plan(dir);
    auto s = splits(p);
    ASSERT_FALSE(s.empty());
    std::string module = stitch::stitch(p.art(), {}, {}, {s[0]->edit});
    verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, module, o);
    ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
    for (size_t g = 0; g < 3; ++g) EXPECT_EQ(ok.cascade.gates[g].status, verify::GateStatus::passed);
    if (std::string(dir) != kLayerNorm) continue;
    // The module as a result delivers it (the kept kernels pinned, as stitching a chosen region does): the
    // end-to-end gate's correctness on the whole model.
    verify::GateRecord e2e = verify::end_to_end(sup, *p.bundle, {module}, o);
    // CPU mode: correct (a wrong model fails), then not timed.
    EXPECT_EQ(e2e.status, verify::GateStatus::not_measured) << e2e.evidence.dump(2);
    // The apply kernel reduces only the first segment's statistics: every row's mean and variance are wrong.
    std::string one = replaced(module, "xmask & (sidx < NSEG)", "xmask & (sidx < 1)");
    verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, one, o);
    EXPECT_FALSE(bad.cascade.accepted);
    ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
    EXPECT_EQ(bad.cascade.gates[0].status, verify::GateStatus::passed);
    EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
  }
}

TEST(SegmentSplit, TheRegionSearchKeepsTimeBackOnlyForBundlesWithARegionCandidate) {
  search::SearchOptions o;
  o.gpu = o.cost.gpu = true;
  o.cost.model_run_s = 0.01;
  auto b = load(kSoftmax);
  const ir::Artifact& a = *b->graphs[0];
  o.cost.model_elements = search::model_elements(*b);
  double split = search::region_reserve_seconds(*b, {}, o);
  EXPECT_GT(split, 0.0);
  // One region cascade (the one kernel's cascade estimate) and each split variant's screen (a compile and ten
  // model runs); the bytes the kernel moves add the GPU cascade's per-byte share.
  agents::KernelProfile moved;
  moved.kernel = &a.kernels[0];
  moved.cost.bytes_read = 1000000000;
  EXPECT_NEAR(search::region_reserve_seconds(*b, {moved}, o) - split, search::kGpuCascadeSecondsPerByte * 1e9, 1e-6);
  const ir::Function* f = a.entry_function();
  const size_t variants =
      agents::fusion::plan_region(a, *f, profile::regions(a, *f, b->meta["graphs"][0]["args"]).at(0)).candidates.size();
  ASSERT_GE(variants, 2u);
  EXPECT_NEAR(search::region_screen_seconds(o), 3.0 + 10 * 0.01, 1e-9);
  EXPECT_DOUBLE_EQ(split, search::cascade_seconds(o.cost, search::kernel_elements(a, a.kernels[0]), std::nullopt) +
                              static_cast<double>(variants) * search::region_screen_seconds(o));
  search::SearchOptions cpu = o;
  cpu.gpu = false;
  EXPECT_EQ(search::region_screen_seconds(cpu), 0.0);  // CPU mode: no screens
  EXPECT_EQ(search::region_reserve_seconds(*load("corpus/softmax_lastdim"), {}, o), 0.0);  // nothing to split/fuse
  EXPECT_GT(search::region_reserve_seconds(*load("corpus/reverse_cumsum"), {}, o), 0.0);    // a fusion
  // The per-kernel search keeps all of it back up to half of what it has: 20 s of 57 s (a third, 19 s, left the
  // split of a 26.8 ms softmax without its cascade), 30 s of 40 s only 20 s, nothing wanted nothing kept.
  EXPECT_EQ(search::region_share_seconds(20, 57), 20.0);
  EXPECT_EQ(search::region_share_seconds(30, 40), 20.0);
  EXPECT_EQ(search::region_share_seconds(0, 40), 0.0);
  EXPECT_EQ(search::region_share_seconds(10, -1), 0.0);
}

TEST(SegmentSplit, OnEveryCapturedBundleItProposesOnlyWhatG1Passes) {
  // Every bundle of the corpus and of the test fixtures: planning never throws, and each split it proposes is
  // an edit G1 takes as is (the generator's host edit and kernels are in the form the gate holds them to).
  size_t proposed = 0, bundles = 0;
  for (const char* root : {"corpus", "tests/python/data"})
    for (const auto& e : fs::directory_iterator(fs::path(KOPT_SOURCE_DIR) / root)) {
      if (!fs::exists(e.path() / "meta.json")) continue;
      std::unique_ptr<ir::Bundle> b;
      try {
        b = ir::load_bundle(e.path().string());
      } catch (const std::exception&) {
        continue;  // not a bundle of Inductor modules (a kernel file's)
      }
      ++bundles;
      SCOPED_TRACE(e.path().string());
      for (size_t g = 0; g < b->graphs.size(); ++g) {
        const ir::Artifact& a = *b->graphs[g];
        const ir::Function* f = a.entry_function();
        if (!f) continue;
        auto rs = profile::regions(a, *f, b->meta["graphs"][g]["args"]);
        for (const profile::Region& r : rs) {
          agents::fusion::RegionPlan plan = agents::fusion::plan_region(a, *f, r);
          for (const auto& c : plan.candidates) {
            if (c.origin.rfind("split:", 0) != 0) continue;  // a reduction's or a scan's
            ++proposed;
            std::string module = stitch::stitch(a, {}, {}, {c.edit});
            verify::RegionG1 g1 = verify::check_region(a, profile::facts(r), module);
            EXPECT_TRUE(g1.g1.passed) << c.description << ": " << failing(g1);
          }
        }
      }
    }
  EXPECT_GE(bundles, 40u);
  EXPECT_GE(proposed, 5u);  // the three fixtures' variants at least
}

TEST(SegmentSplit, AStoreInductorLeftUnmaskedIsGuardedBySegmentZero) {
  // row_sum_long's first kernel with its row store unmasked (`None`, as Inductor writes it where every config
  // divides the rows): the apply kernel's store takes the segment guard as its mask.
  fs::path dir = kopt::testing::edited_copy(
      "corpus/row_sum_long", "kopt_split_unmasked",
      {{"tl.store(out_ptr0 + (x0), tmp2, xmask)", "tl.store(out_ptr0 + (x0), tmp2, None)"}});
  Planned p = plan(dir.string());
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s[0]->edit.source.find("tl.store(out_ptr0 + (x0), tmp2, sseg == 0)"), std::string::npos)
      << s[0]->edit.source;
  fs::remove_all(dir);
}

namespace {

// The cooperative candidates of a fixture's launch 0, offered whatever the tensor's size.
// `segment_bytes`: what a program's segment holds (fewer, longer segments: the interpreter computes a tile's
// later segments once for every program before them).
std::vector<std::pair<std::string, stitch::RegionEdit>> cooperative(const Planned& p, std::string* why,
                                                                    int64_t segment_bytes = 64 << 10) {
  agents::fusion::SplitOptions o;
  o.coop_min_bytes = 0;
  o.coop_segment_bytes = segment_bytes;
  o.coop_across_only = false;  // every walk: the form's correctness (the default proposes it across memory only)
  auto all = agents::fusion::segment_split(p.art(), *p.art().entry_function(), 0, why, o);
  std::vector<std::pair<std::string, stitch::RegionEdit>> out;
  for (auto& c : all)
    if (c.second.kernel.ends_with("_coop")) out.push_back(std::move(c));
  return out;
}

}  // namespace

TEST(SegmentSplit, TheCooperativeFormIsOneLaunchAfterItsFlagsAreZeroed) {
  Planned p = plan(kColumns);
  std::string why;
  auto c = cooperative(p, &why);
  ASSERT_FALSE(c.empty()) << why;
  const stitch::RegionEdit& e = c[0].second;
  // 64 columns of 9000 fp32-accumulated bf16, tiles of 64 columns: segments of 64 KiB of bf16 (512 rows).
  EXPECT_NE(c[0].first.find("one launch: 64 rows of 9000 in 18 segments of 512 (18 programs, tiles of 64 rows"),
            std::string::npos)
      << c[0].first;
  ASSERT_EQ(e.before.size(), 1u);
  EXPECT_EQ(e.before[0].kernel, e.kernel + "_flags");
  ASSERT_EQ(e.scratch.size(), 2u);
  EXPECT_NE(e.scratch[1].statement.find("torch.int32"), std::string::npos);
  // A program counts itself in only after its partials are stored (release), reads the partials only after
  // the count is full (acquire) and past L1; the wait polls one word with plain loads.
  size_t store = e.source.find("tl.store(partials"), arrive = e.source.find("1, sem='release')");
  size_t acquire = e.source.find("0, sem='acquire')"), read = e.source.find("cache_modifier='.cg'");
  EXPECT_LT(store, arrive);
  EXPECT_LT(arrive, acquire);
  EXPECT_LT(acquire, read);
  EXPECT_NE(read, std::string::npos);
  EXPECT_NE(e.source.find("volatile=True"), std::string::npos);
  EXPECT_EQ(e.source.find("tl.program_id"), std::string::npos);  // tiles come from tickets
  std::string module = stitch::stitch(p.art(), {}, {}, {e});
  verify::RegionG1 g1 = verify::check_region(p.art(), p.facts, module);
  EXPECT_TRUE(g1.g1.passed) << failing(g1);
  // Segments the cap on segments lengthens past twice the aim (2 KiB here: 96 rows of 64 bf16 columns, 12 KiB) come
  // after the two-launch split's candidates.
  agents::fusion::SplitOptions tight;
  tight.coop_min_bytes = 0;
  tight.coop_segment_bytes = 2 << 10;
  tight.coop_max_segments = 1024;
  auto ordered = agents::fusion::segment_split(p.art(), *p.art().entry_function(), 0, &why, tight);
  // (Tiles of 32 columns keep their R0_BLOCK's 64 rows, 4 KiB: within twice the aim, first.)
  ASSERT_GE(ordered.size(), 3u);
  EXPECT_NE(ordered.front().first.find("one launch: 64 rows of 9000 in 141 segments of 64"), std::string::npos)
      << ordered.front().first;
  EXPECT_NE(ordered.back().first.find("one launch: 64 rows of 9000 in 94 segments of 96"), std::string::npos)
      << ordered.back().first;
  for (size_t i = 1; i + 1 < ordered.size(); ++i)
    EXPECT_FALSE(ordered[i].second.kernel.ends_with("_coop")) << ordered[i].first;
  // At the default cap a tile has at most 64 programs: the rows get longer segments instead.
  tight.coop_max_segments = agents::fusion::SplitOptions{}.coop_max_segments;
  size_t capped = 0;
  for (const auto& c : agents::fusion::segment_split(p.art(), *p.art().entry_function(), 0, &why, tight)) {
    if (!c.second.kernel.ends_with("_coop")) continue;
    ++capped;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(c.first, m, std::regex(R"(in (\d+) segments)"))) << c.first;
    EXPECT_LE(std::stoi(m[1]), 64) << c.first;
  }
  EXPECT_GE(capped, 1u);
  // Rows along memory (a row a program): by default not proposed (measured slower), with the option it is.
  Planned rows = plan(kSoftmax);
  agents::fusion::SplitOptions any;
  any.coop_min_bytes = 0;
  auto along = agents::fusion::segment_split(rows.art(), *rows.art().entry_function(), 0, &why, any);
  for (const auto& s : along) EXPECT_FALSE(s.second.kernel.ends_with("_coop")) << s.first;
  EXPECT_FALSE(cooperative(rows, &why).empty()) << why;
  // Small tensors: L2 serves the second read already; only the two-launch split is proposed.
  std::string w;
  auto small = agents::fusion::segment_split(p.art(), *p.art().entry_function(), 0, &w);
  for (const auto& s : small) EXPECT_FALSE(s.second.kernel.ends_with("_coop")) << s.first;
}

TEST(RegionCascadeWorker, TheCooperativeFormPassesG1ToG3AndOneThatReadsItsOwnPartialFailsG2) {
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  // Three or four segments a row: 50304 bf16, 9000 bf16 in tiles of 64, 9001 in tiles of 32, 9000 fp32 (Welford).
  for (auto [dir, bytes] : {std::pair{kSoftmax, 32 << 10}, {kColumns, 256 << 10}, {kTransposedOut, 128 << 10},
                            {kLayerNorm, 12 << 10}}) {
    SCOPED_TRACE(dir);
    Planned p = plan(dir);
    std::string why;
    auto c = cooperative(p, &why, bytes);
    ASSERT_FALSE(c.empty()) << why;
    std::string module = stitch::stitch(p.art(), {}, {}, {c[0].second});
    verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, module, o);
    ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
    if (std::string(dir) != kColumns) continue;
    // Every program reduces only its own segment's statistics.
    std::string own = replaced(module, "xmask & (sidx < NSEG)", "xmask & (sidx == sseg)");
    verify::RegionCascadeResult bad = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, own, o);
    EXPECT_FALSE(bad.cascade.accepted);
    ASSERT_EQ(bad.cascade.gates.size(), 2u) << results::cascade_json(bad.cascade).dump(2);
    EXPECT_EQ(bad.cascade.gates[1].status, verify::GateStatus::failed);
  }
}

// The Triton interpreter does not type-check a kernel as the compiler does: a form that passed G1-G3 in CPU
// mode once failed every G2 run on the GPU (an accumulator's name reassigned inside an `if` with another shape,
// session 36). tools/compile_hopper.py compiles each new kernel for sm_90 without a GPU; both forms of the
// split, on every bundle the cascade tests use, must compile, and the reassignment must not.
TEST(SegmentSplit, EveryFormCompilesForHopperWithoutAGpu) {
  fs::path dir = fs::temp_directory_path() / fmt::format("kopt_hopper_{}", ::getpid());
  fs::create_directories(dir);
  std::vector<std::string> files;
  size_t kernels = 0;
  for (auto [bundle, bytes] : {std::pair{kSoftmax, 32 << 10}, {kColumns, 256 << 10}, {kTransposedOut, 128 << 10},
                               {kLayerNorm, 12 << 10}}) {
    Planned p = plan(bundle);
    std::string why;
    std::vector<stitch::RegionEdit> edits;
    for (auto& c : cooperative(p, &why, bytes)) edits.push_back(c.second);
    ASSERT_FALSE(edits.empty()) << bundle << ": " << why;
    auto two = splits(p);
    if (!two.empty()) edits.push_back(two[0]->edit);
    for (const stitch::RegionEdit& e : edits) {
      fs::path f = dir / fmt::format("m{}.py", files.size());
      std::ofstream(f) << stitch::stitch(p.art(), {}, {}, {e});
      files.push_back(f.string());
      kernels += 1 + e.before.size();
    }
  }
  auto run = [&](const std::vector<std::string>& fs_, const std::string& log) {
    std::string cmd = fmt::format("python3 {}/tools/compile_hopper.py {} > {} 2>&1", KOPT_SOURCE_DIR,
                                  fmt::join(fs_, " "), log);
    return WEXITSTATUS(std::system(cmd.c_str()));
  };
  auto read = [](const fs::path& p) {
    std::stringstream ss;
    ss << std::ifstream(p).rdbuf();
    return ss.str();
  };
  fs::path log = dir / "log.txt";
  EXPECT_EQ(run(files, log.string()), 0) << read(log);
  std::string out = read(log);
  size_t compiled = 0;
  for (size_t at = out.find("compiled for sm_90"); at != std::string::npos; at = out.find("compiled for sm_90", at + 1))
    ++compiled;
  EXPECT_EQ(compiled, kernels) << out;
  // The reassignment the interpreter let through.
  std::string coop = read(files[0]);
  size_t at = coop.find("        for kopt_seg in range(0, NSEG):\n");
  ASSERT_NE(at, std::string::npos);
  coop.insert(at, "        _tmp3_max = tl.full([XBLOCK, 8], float('-inf'), tl.float32)\n");
  fs::path bad = dir / "bad.py";
  std::ofstream(bad) << coop;
  fs::path bad_log = dir / "bad.txt";
  EXPECT_EQ(run({bad.string()}, bad_log.string()), 1) << read(bad_log);
  EXPECT_NE(read(bad_log).find("CompilationError"), std::string::npos) << read(bad_log);
  fs::remove_all(dir);
}

TEST(TileAddresses, AWidenedSplitsAddressesAreABaseAStepAndTileOffsetsAndItsLoopIndexNarrows) {
  // Inductor's widened form (draw 33811's row 46, shrunk): each address affine in the row's and the loop's
  // aliases splits; the loop index then has no use but its mask and narrows; the partials' addresses (a
  // segment index in them) stay as written.
  std::string body =
      "    xnumel = 96\n    r0_numel = 9001\n"
      "    xoffset = (tl.program_id(0) // NSEG).to(tl.int64) * XBLOCK\n"
      "    xindex = xoffset + tl.arange(0, XBLOCK)[:, None].to(tl.int64)\n"
      "    xmask = xindex < xnumel\n"
      "    r0_base = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)\n"
      "    x0 = xindex\n"
      "    m = tl.load(partials + (0 + xindex * NSEG + sidx), xmask, other=0.0)\n"
      "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n"
      "        r0_index = r0_offset + r0_base\n"
      "        r0_mask = r0_index < r0_numel\n"
      "        rindex = r0_index\n"
      "        r0_1 = r0_index\n"
      "        tmp5 = tl.load(in_ptr0 + (r0_1 + 9001*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)\n"
      "        tl.store(out_ptr2 + (x0 + 96*r0_1), tmp5, r0_mask & xmask)\n";
  agents::fusion::TiledAddresses t = agents::fusion::tile_addresses(body, 32, 64);
  EXPECT_EQ(t.rewritten, 2);
  EXPECT_TRUE(t.narrowed);
  EXPECT_NE(t.body.find("tl.load(in_ptr0 + (9001*xoffset + tl.cast(r0_offset, tl.int64)) + (9001*kopt_xl + kopt_rl), "
                        "r0_mask & xmask, eviction_policy='evict_first', other=0.0)"),
            std::string::npos)
      << t.body;
  EXPECT_NE(t.body.find("tl.store(out_ptr2 + (xoffset + 96*tl.cast(r0_offset, tl.int64)) + (kopt_xl + 96*kopt_rl), tmp5"),
            std::string::npos)
      << t.body;
  EXPECT_NE(t.body.find("    r0_base = tl.arange(0, R0_BLOCK)[None, :]\n    kopt_rl = tl.arange(0, R0_BLOCK)[None, :]\n"),
            std::string::npos)
      << t.body;
  EXPECT_NE(t.body.find("tl.load(partials + (0 + xindex * NSEG + sidx)"), std::string::npos);
  // A loop index read elsewhere keeps its 64 bits; tiles whose offsets could pass 2^31 keep the address.
  std::string other = body + "        tmp6 = r0_1 * 3\n";
  EXPECT_FALSE(agents::fusion::tile_addresses(other, 32, 64).narrowed);
  EXPECT_EQ(agents::fusion::tile_addresses(body, int64_t{1} << 23, 64).rewritten, 1);  // 9001 * 2^23 > 2^31
  // A kernel that does not widen is left alone.
  std::string narrow = replaced(body, ".to(tl.int64) * XBLOCK", " * XBLOCK");
  EXPECT_EQ(agents::fusion::tile_addresses(narrow, 32, 64).rewritten, 0);
  EXPECT_EQ(agents::fusion::tile_addresses(narrow, 32, 64).body, narrow);
}

TEST(RegionCascadeWorker, AWidenedSoftmaxsSplitWithTileOffsetsPassesG1ToG3AndCompilesForHopper) {
  // The widened fixture: every split variant's addresses split, G1-G3 in the interpreter, and Triton's compiler
  // for sm_90 takes both launches.
  const char* wide = "tests/python/data/softmax_transposed_out_bf16_wide_form";
  Planned p = plan(wide);
  auto s = splits(p);
  ASSERT_FALSE(s.empty());
  for (const auto* c : s) {
    if (c->description.find("one launch") != std::string::npos) continue;
    EXPECT_NE(c->description.find("address(es) as a 64-bit base a step and 32-bit tile offsets"), std::string::npos)
        << c->description;
    EXPECT_NE(c->edit.source.find("kopt_xl"), std::string::npos);
  }
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = 2;
  std::string module = stitch::stitch(p.art(), {}, {}, {s[0]->edit});
  verify::RegionCascadeResult ok = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, module, o);
  ASSERT_TRUE(ok.cascade.accepted) << results::cascade_json(ok.cascade).dump(2);
  // Every split's statistics read along the row: the online softmax with one max a chunk (softmax_chunks.h).
  for (const auto* c : s)
    if (c->description.find("one launch") == std::string::npos) {
      EXPECT_NE(c->description.find("the statistics' online softmax with one max a chunk"), std::string::npos)
          << c->description;
      ASSERT_EQ(c->edit.before.size(), 1u);  // the statistics launch
      const std::string& stats = c->edit.before[0].source;
      EXPECT_NE(stats.find("_tmp3_bm = triton_helpers.maximum(_tmp3_max, triton_helpers.max2(_tmp3_bv, 1)"),
                std::string::npos)
          << stats;
      EXPECT_EQ(stats.find("online_softmax_combine("), std::string::npos);
    }
  // The 128-row tiles with the apply loop in the hand-written probe's form — the division by the row's sum as one
  // reciprocal a row, exp2, loads without the evict_first hint: within G2's and G3's tolerances here.
  const agents::fusion::RegionCandidate* fast = nullptr;
  for (const auto* c : s)
    if (c->description.find("divisions by the row's values as one reciprocal a row") != std::string::npos) fast = c;
  ASSERT_NE(fast, nullptr);
  EXPECT_NE(fast->description.find("tiles of 128 rows"), std::string::npos) << fast->description;
  EXPECT_NE(fast->edit.source.find("    kopt_rcp_tmp4 = 1.0 / tmp4\n    for r0_offset in "), std::string::npos)
      << fast->edit.source;
  EXPECT_NE(fast->edit.source.find("tmp9 = (tmp8 * kopt_rcp_tmp4)"), std::string::npos);
  EXPECT_EQ(fast->edit.source.find("(tmp8 / tmp4)"), std::string::npos);
  EXPECT_NE(fast->edit.source.find("tmp8 = tl.math.exp2((tmp7) * 1.4426950408889634)"), std::string::npos);
  EXPECT_EQ(fast->edit.source.find("libdevice.exp(tmp7)"), std::string::npos);
  EXPECT_EQ(fast->edit.source.find("evict_first"), std::string::npos);
  const std::string fast_module = stitch::stitch(p.art(), {}, {}, {fast->edit});
  verify::RegionCascadeResult quick = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, fast_module, o);
  EXPECT_TRUE(quick.cascade.accepted) << results::cascade_json(quick.cascade).dump(2);
  // An offset off by one row in the apply launch's store: wrong outputs, G2 fails.
  std::string bad = replaced(module, "(kopt_xl + 96*kopt_rl)", "(kopt_xl + 96*kopt_rl + 96)");
  ASSERT_NE(bad, module);
  verify::RegionCascadeResult no = verify::run_region_cascade(sup, *p.bundle, 0, p.facts, bad, o);
  EXPECT_FALSE(no.cascade.accepted);
  for (const std::string* m : {static_cast<const std::string*>(&module), &fast_module}) {
    kopt::testing::Compiled c = kopt::testing::compile_hopper(*m);
    EXPECT_EQ(c.status, 0) << c.out;
    EXPECT_NE(c.out.find("compiled for sm_90"), std::string::npos) << c.out;
  }
}
