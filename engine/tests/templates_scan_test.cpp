// The scan and min/max/arg-reduction templates on real corpus kernels: which kernels
// they apply to (and pass G1 on), and which they decline, with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/agent.h"
#include "agents/coder/templates/templates.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "verify/outputs.h"
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

// KOPT_DUMP_TEMPLATES=DIR writes each first instance for reading.
void dump(const std::string& name, const std::vector<agents::Candidate>& cands) {
  const char* dir = std::getenv("KOPT_DUMP_TEMPLATES");
  if (!dir || cands.empty()) return;
  std::ofstream(fs::path(dir) / (name + ".py")) << cands.front().source;
}

}  // namespace

TEST(ScanRowsTemplate, AppliesToCumsumCumprodAndReversedScans) {
  struct Case {
    const char* bundle;
    int64_t rows, cols;
  };
  for (Case c : {Case{"cumsum_lastdim", 64, 1024}, Case{"cumprod_lastdim", 128, 256}, Case{"reverse_cumsum", 64, 1024}}) {
    auto b = corpus(c.bundle);
    auto p = profile_of(*b, 0, {tensor({c.rows, c.cols}), tensor({c.rows, c.cols}), value(c.rows), value(c.cols)});
    ASSERT_EQ(p.family, "scan") << c.bundle;
    std::string why;
    auto cands = agents::templates::instantiate(p, &why);
    ASSERT_FALSE(cands.empty()) << c.bundle << ": " << why;
    dump(std::string("scan_rows_") + c.bundle, cands);
    // The first instance loops over chunks with a carried prefix, combined by the kernel's own function.
    EXPECT_NE(cands.front().source.find("for r0_offset in tl.range(R0_BLOCK"), std::string::npos) << c.bundle;
    EXPECT_NE(cands.front().source.find("kopt_carry = _triton_helper_fn_"), std::string::npos) << c.bundle;
    for (const auto& cand : cands) {
      EXPECT_EQ(cand.origin, "template:scan");
      EXPECT_TRUE(verify::run_g1(*p.kernel, cand.source).passed) << c.bundle << " " << cand.description;
    }
  }
}

TEST(ScanRowsTemplate, KeepsAFusedEpilogue) {
  // cumsum(x) - x (an exclusive scan) fuses the subtraction after the scan: reused per chunk.
  auto b = corpus("cumsum_lastdim");
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  size_t at = k.source.find("    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp3, xmask)");
  ASSERT_NE(at, std::string::npos);
  k.source.replace(at, std::string("    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp3, xmask)").size(),
                   "    tmp4 = tmp3 - tmp1\n    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp4, xmask)");
  auto p = profile_of(*b, 0, {tensor({64, 1024}), tensor({64, 1024}), value(64), value(1024)});
  p.kernel = &k;
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  const std::string& s = cands.front().source;
  EXPECT_NE(s.find("        tmp3 = _triton_helper_fn_add0(kopt_carry, tmp3)\n"), std::string::npos);
  EXPECT_NE(s.find("        tmp4 = tmp3 - tmp1\n        tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp4, xmask)"),
            std::string::npos);
  EXPECT_NE(s.find("    tmp4_c0 = tmp3_c0 - tmp1_c0\n"), std::string::npos);
  for (const auto& c : cands) EXPECT_TRUE(verify::run_g1(k, c.source).passed) << c.description;
}

TEST(ScanRowsTemplate, DeclinesWhatItDoesNotHandle) {
  std::string why;
  // A launch whose row length differs from the kernel's.
  auto b = corpus("cumsum_lastdim");
  auto p = profile_of(*b, 0, {tensor({64, 2048}), tensor({64, 2048}), value(64), value(2048)});
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("row length"), std::string::npos) << why;
  // A kernel with a reduction beside the scan: the chunks would cut it.
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  size_t at = k.source.find("    tl.store(");
  k.source.insert(at, "    tmp9 = tl.sum(tmp2, 1)[:, None]\n");
  p.kernel = &k;
  p.launches = {{{"args", {tensor({64, 1024}), tensor({64, 1024}), value(64), value(1024)}}}};
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("not elementwise"), std::string::npos) << why;
}

TEST(ColumnReductionTemplate, TransposesOuterReductionsAndPassesG1) {
  // corpus mean_dim0: a split column mean (partials over row chunks, then their mean).
  auto b = corpus("mean_dim0");
  auto p = profile_of(*b, 0, {tensor({256, 256}), tensor({512}), value(512), value(128)});
  ASSERT_EQ(p.family, "reduction");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  dump("column_reduction_mean_dim0", cands);
  const std::string& s = cands.front().source;
  EXPECT_NE(s.find("xindex = xoffset + tl.arange(0, XBLOCK)[None, :]"), std::string::npos);
  EXPECT_NE(s.find("_tmp2 = tl.full([R0_BLOCK, XBLOCK], 0, tl.float32)"), std::string::npos);
  EXPECT_NE(s.find("tmp2 = tl.sum(_tmp2, 0)[None, :]"), std::string::npos);
  for (const auto& c : cands) EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  // An argmin over dim 0 in the form Inductor writes it (the running update split over lines).
  auto a = ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "tests/python/data/argmin_dim0_inductor_form").string());
  auto q = profile_of(*a, 0, {tensor({512, 64}), tensor({64}, "int64"), value(64), value(512)});
  ASSERT_EQ(q.family, "arg_reduction");
  auto arg = agents::templates::instantiate(q, &why);
  ASSERT_FALSE(arg.empty()) << why;
  dump("column_reduction_argmin", arg);
  EXPECT_NE(arg.front().source.find("tmp2_val, tmp2_idx = triton_helpers.min_with_index(_tmp2, _tmp2_index, 0)"),
            std::string::npos);
  EXPECT_NE(arg.front().source.find("minimum_with_index(_tmp2, _tmp2_index, tmp1, rindex)"), std::string::npos);
  for (const auto& c : arg) EXPECT_TRUE(verify::run_g1(*q.kernel, c.source).passed) << c.description;
  // The row loop carries the config's stage count (Triton ignores the launch's for it).
  for (const auto& c : arg)
    EXPECT_NE(c.source.find(fmt::format("tl.range(0, r0_numel, R0_BLOCK, num_stages={}):",
                                        c.config["num_stages"].get<int>())),
              std::string::npos)
        << c.description;
}

TEST(ColumnReductionTemplate, DeclinesRowReductionsAndUnknownShapes) {
  std::string why;
  // argmax over the contiguous last dimension: Inductor's INNER layout is already coalesced.
  auto b = corpus("argmax_dim");
  auto p = profile_of(*b, 0, {tensor({128, 512}), tensor({128}, "int64"), value(128), value(512)});
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("strided dimension"), std::string::npos) << why;
  // A statement that depends on the orientation ([XBLOCK, 1]) is refused, not guessed.
  auto m = corpus("mean_dim0");
  ir::Kernel k = m->graphs[0]->kernels.at(0);
  size_t at = k.source.find("    x3 = xindex");
  k.source.insert(at, "    tmp9 = tl.full([XBLOCK, 1], 0, tl.int32)\n");
  p = profile_of(*m, 0, {tensor({256, 256}), tensor({512}), value(512), value(128)});
  p.kernel = &k;
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("orientation"), std::string::npos) << why;
}

TEST(ScratchArgs, ASplitScansWorkspaceOnly) {
  // cumsum_long_large: `workspace_0` is allocated, zeroed, passed to the split scan alone and freed.
  auto b = corpus("cumsum_long_large");
  EXPECT_EQ(verify::scratch_args(*b->graphs[0], b->graphs[0]->kernels.at(0)), std::vector<size_t>{2});
  // Outputs and inputs are never scratch, nor is a workspace something else reads afterwards.
  auto s = corpus("softmax_large");
  EXPECT_TRUE(verify::scratch_args(*s->graphs[0], s->graphs[0]->kernels.at(0)).empty());
  std::string src = b->graphs[0]->module->source();
  size_t at = src.find("            del workspace_0");
  ASSERT_NE(at, std::string::npos);
  src.insert(at, "            buf0.add_(workspace_0[0])\n");
  auto read_after = ir::build(src, "cumsum_long_large (workspace read after the launch)");
  EXPECT_TRUE(verify::scratch_args(*read_after, read_after->kernels.at(0)).empty());
}

TEST(ScanSplitTemplate, SegmentsOfALongRowThroughTheKernelsLookback) {
  auto b = corpus("cumsum_long_large");
  auto p = profile_of(*b, 0, {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                              value(2097152)});
  ASSERT_EQ(p.family, "scan");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  dump("scan_split_cumsum_long_large", cands);
  const std::string& s = cands.front().source;
  EXPECT_NE(s.find("triton_helpers.exclusive_scan_decoupled_lookback(tmp2, kopt_total, tl.program_id(0), "
                   "_triton_helper_fn_add0, DTYPE_VALUE_AS_UINT=tl.uint32, DTYPE_PACK=tl.uint64)"),
            std::string::npos);
  for (const auto& c : cands) {
    // Every segment is at least the block the host sized the workspace for, and divides the row.
    int64_t seg = c.config["R0_BLOCK"];
    EXPECT_GE(seg, 256);
    EXPECT_EQ(2097152 % seg, 0);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // A statement between the block total and its lookback is not reordered: declined.
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  size_t at = k.source.find("    tmp6 = triton_helpers");
  k.source.insert(at, "    tmp99 = tmp5 * 2.0\n");
  p.kernel = &k;
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("lookback sequence"), std::string::npos) << why;
}

TEST(ScanSplitTemplate, TheWorkspaceExpressionInlineInTheLookback) {
  // Newer Inductor (torch 2.13) writes the workspace pointer's expression as the lookback's first
  // argument instead of a statement of its own: the same candidates, the expression bound first.
  auto b = corpus("cumsum_long_large");
  auto p = profile_of(*b, 0, {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                              value(2097152)});
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  const std::string stmt = "    tmp2 = ws_ptr.to(tl.pointer_type(tl.uint64)) + xoffset * 1 * tmp1\n";
  size_t at = k.source.find(stmt);
  ASSERT_NE(at, std::string::npos);
  k.source.erase(at, stmt.size());
  size_t arg = k.source.find("        tmp2,\n");
  ASSERT_NE(arg, std::string::npos);
  k.source.replace(arg, std::string("        tmp2,\n").size(),
                   "        ws_ptr.to(tl.pointer_type(tl.uint64)) + xoffset * 1 * tmp1,\n");
  p.kernel = &k;
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  const std::string& s = cands.front().source;
  EXPECT_NE(s.find("kopt_ws = ws_ptr.to(tl.pointer_type(tl.uint64)) + xoffset * 1 * tmp1"), std::string::npos) << s;
  EXPECT_NE(s.find("triton_helpers.exclusive_scan_decoupled_lookback(kopt_ws, kopt_total, tl.program_id(0), "),
            std::string::npos)
      << s;
  for (const auto& c : cands) EXPECT_TRUE(verify::run_g1(k, c.source).passed) << c.description;
}

TEST(ScanSplitTemplate, ARowOfAnOddLengthIsMaskedNotDeclined) {
  // A row no block divides (a fresh draw's 1-D exclusive cumsum over 107391517 elements): Inductor masks it
  // (`r0_index < r0_numel`, loads with `other`); the segments then round the row up, each chunk's mask made
  // from its own index, and the stores stay masked.
  auto b = corpus("cumsum_long_large");
  const int64_t n = 2097141;
  auto p = profile_of(*b, 0, {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                              value(n)});
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  auto swap = [&](const std::string& from, const std::string& to) {
    size_t at = k.source.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    k.source.replace(at, from.size(), to);
  };
  swap("r0_numel = 2097152", fmt::format("r0_numel = {}", n));
  swap("r0_mask = tl.full([R0_BLOCK], True, tl.int1)[:]", "r0_mask = r0_index < r0_numel");
  swap("2097152*x0), None, eviction_policy='evict_last')", "2097152*x0), r0_mask, eviction_policy='evict_last', other=0.0)");
  swap("tmp9, None)", "tmp9, r0_mask)");
  p.kernel = &k;
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  std::set<int64_t> segs;
  for (const auto& c : cands) {
    segs.insert(c.config["R0_BLOCK"].get<int64_t>());
    EXPECT_NE(c.source.find("r0_mask = r0_index < r0_numel"), std::string::npos) << c.source;
    EXPECT_NE(c.source.find("tmp9, r0_mask)"), std::string::npos) << c.source;
    EXPECT_TRUE(verify::run_g1(k, c.source).passed) << c.description;
  }
  // Segments that do not divide the row (2097141 is odd), at least the host's smallest block.
  EXPECT_TRUE(segs.count(16384) && segs.count(8192)) << fmt::format("{}", fmt::join(segs, ","));
  // A row mask it cannot read is still declined.
  swap("r0_mask = r0_index < r0_numel", "r0_mask = r0_index < 77");
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("row mask"), std::string::npos) << why;
}

TEST(ScanSplitTemplate, OneSegmentPerRowWhenRowsAreMany) {
  // 64 rows of 2M: one program per row carries its prefix in registers — no totals pass, no lookback —
  // and those instances come first; with 4 rows (too few programs) they are not proposed.
  auto b = corpus("cumsum_long_large");
  auto launch = [](int64_t rows) {
    return std::vector<json>{tensor({rows, 2097152}), tensor({rows, 2097152}), tensor({262144}, "uint8"), value(rows),
                             value(2097152)};
  };
  std::string why;
  auto many = agents::templates::instantiate(profile_of(*b, 0, launch(64)), &why);
  ASSERT_FALSE(many.empty()) << why;
  size_t whole = 0;
  for (const auto& c : many) {
    bool one = c.description.starts_with("scan_split one segment per row");
    if (!one) continue;
    EXPECT_EQ(whole, &c - &many.front()) << "one-segment instances come first";
    ++whole;
    EXPECT_EQ(c.config["R0_BLOCK"].get<int64_t>(), 2097152);
    EXPECT_EQ(c.source.find("exclusive_scan_decoupled_lookback"), std::string::npos);
    EXPECT_NE(c.source.find("for kopt_chunk in tl.range(R0_BLOCK_KOPT, R0_BLOCK, R0_BLOCK_KOPT)"), std::string::npos);
    EXPECT_TRUE(verify::run_g1(b->graphs[0]->kernels.at(0), c.source).passed) << c.description;
  }
  EXPECT_GE(whole, 4u);
  auto few = agents::templates::instantiate(profile_of(*b, 0, launch(4)), &why);
  for (const auto& c : few) EXPECT_FALSE(c.description.starts_with("scan_split one segment")) << c.description;
}

TEST(ScanSplitTemplate, ColumnTilesForAScanReadStridedAndWrittenContiguous) {
  // An exclusive cumsum over the rows of a transposed fp16 tensor written contiguous (a fresh draw's row 50 on an
  // H100, 1000 x 588663: 19.3 ms against a 0.79 ms floor, one column a program): loads 24 elements apart, stores
  // along the row. Column tiles read across the columns and write along the rows, both coalesced.
  auto b = ir::load_bundle(
      (fs::path(KOPT_SOURCE_DIR) / "tests/python/data/cumsum_excl_transposed_columns_inductor_form").string());
  json in = tensor({24, 1100}, "float16");
  in["stride"] = {1, 24};
  auto p = profile_of(*b, 0, {in, tensor({24, 1100}, "float16"), tensor({960}, "uint8"), value(24), value(1100)});
  ASSERT_EQ(p.family, "scan");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_TRUE(c.description.starts_with("scan_split columns: ")) << c.description;
    EXPECT_EQ(c.source.find("exclusive_scan_decoupled_lookback"), std::string::npos);
    EXPECT_NE(c.source.find("tl.store(out_ptr1 + (r0_1 + 1100*x0)"), std::string::npos) << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // Both accesses contiguous along the row would be a row scan: no column tiles then.
  ir::Kernel k = *p.kernel;
  k.source = kopt::testing::replaced(k.source, "x0 + 24*r0_1", "r0_1 + 1100*x0");
  p.kernel = &k;
  for (const auto& c : agents::templates::instantiate(p, &why))
    EXPECT_FALSE(c.description.starts_with("scan_split columns")) << c.description;
}

TEST(ScanSplitTemplate, ColumnTilesForAScanOverAnOuterAxis) {
  // An exclusive cumprod over dim 0 (Inductor: one column a program, every load 24 elements from the last, a
  // masked row of 1100): programs of adjacent columns, each scanned whole; no lookback, the workspace unused.
  auto b = ir::load_bundle(
      (fs::path(KOPT_SOURCE_DIR) / "tests/python/data/cumprod_excl_columns_inductor_form").string());
  auto p = profile_of(*b, 0, {tensor({1100, 24}, "bfloat16"), tensor({1100, 24}, "bfloat16"), tensor({960}, "uint8"),
                              value(24), value(1100)});
  ASSERT_EQ(p.family, "scan");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  dump("scan_split_columns", cands);
  for (const auto& c : cands) {
    EXPECT_TRUE(c.description.starts_with("scan_split columns: ")) << c.description;
    EXPECT_EQ(c.config["R0_BLOCK"].get<int64_t>(), 1100);  // one segment: the grid's x axis is one program
    EXPECT_EQ(c.source.find("exclusive_scan_decoupled_lookback"), std::string::npos);
    for (const char* s : {"xindex = xoffset + tl.arange(0, XBLOCK_KOPT)[None, :]", "    if xoffset < xnumel:\n",
                          "r0_mask = (r0_index < r0_numel) & xmask", "tl.arange(0, R0_BLOCK_KOPT)[:, None]",
                          "keep_dims=True", "[R0_BLOCK_KOPT, XBLOCK_KOPT]", "tl.debug_barrier()"})
      EXPECT_NE(c.source.find(s), std::string::npos) << s << "\n" << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // A scan along contiguous rows keeps the segment forms; its barrier-free split scan takes no column tiles.
  auto rows = corpus("cumsum_long_large");
  auto r = profile_of(*rows, 0, {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                                 value(2097152)});
  for (const auto& c : agents::templates::instantiate(r, &why))
    EXPECT_FALSE(c.description.starts_with("scan_split columns")) << c.description;
  // A row-contiguous split scan with a barrier is still declined, naming it.
  ir::Kernel k = rows->graphs[0]->kernels.at(0);
  k.source = kopt::testing::replaced(k.source, "    tl.store(", "    tl.debug_barrier()\n    tl.store(");
  r.kernel = &k;
  EXPECT_TRUE(agents::templates::instantiate(r, &why).empty());
  EXPECT_NE(why.find("tl.debug_barrier()"), std::string::npos) << why;
}
