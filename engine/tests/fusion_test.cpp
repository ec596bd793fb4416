// Region fusion in the built-in coder (agents/coder/fusion/): the index map's inversion of a load
// that walks a buffer once, and the epilogue strategy with its host-code edit (stitch/region.h) on
// the captured reverse_cumsum bundle (a flipped scan, then a flip).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "agents/coder/fusion/fusion.h"
#include "artifact/index_map.h"
#include "artifact/pyparse/ast.h"
#include "stitch/stitch.h"
#include "test_util.h"

using namespace kopt;
using namespace kopt::agents::fusion;
using namespace kopt::ir;
using kopt::testing::corpus;

namespace {

Affine parsed(const std::string& expr) {
  auto m = py::parse(expr + "\n", "<test>");
  auto a = affine(m->root()->list("body").front()->child("value"));
  EXPECT_TRUE(a.has_value()) << expr;
  return a.value_or(Affine{});
}

std::vector<Digit> flip_digits() { return {{"x0", 1, 1024}, {"x1", 1024, 64}}; }

}  // namespace

TEST(FusionIndex, AffineReadsInductorsIndexExpressions) {
  Affine a = parsed("1023 + ((-1)*x0) + 1024*x1");
  EXPECT_EQ(a.c, 1023);
  EXPECT_EQ(a.coef.at("x0"), -1);
  EXPECT_EQ(a.coef.at("x1"), 1024);
  auto m = py::parse("x0 // 2\n", "<test>");
  EXPECT_FALSE(affine(m->root()->list("body").front()->child("value")).has_value());
}

TEST(FusionIndex, AffineUnderRangesReadsDivisionsThatStayInOneMultiple) {
  // An address bound to the producer's names (a = r0_2 + 1152*x3, r0_2 < 1100) read back through the inverse's
  // digits: `a % 1152` is r0_2 and `a // 1152` is x3 wherever the names are in range.
  auto read = [](const std::string& expr, const std::map<std::string, int64_t>& range) {
    auto m = py::parse(expr + "\n", "<test>");
    return affine(m->root()->list("body").front()->child("value"), {{"a", parsed("r0_2 + 1152*x3")}}, range);
  };
  auto d = read("(1099 - (a % 1152)) + 1100 * (a // 1152)", {{"r0_2", 1100}});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->c, 1099);
  EXPECT_EQ(d->coef, (std::map<std::string, int64_t>{{"r0_2", -1}, {"x3", 1100}}));
  // A low part that can pass the divisor (r0_2 up to 2047), or a name without a range, is not read.
  EXPECT_FALSE(read("a % 1152", {{"r0_2", 2048}}).has_value());
  EXPECT_FALSE(read("a // 1152", {}).has_value());
  EXPECT_EQ(floordiv(-7, 2), -4);
}

TEST(FusionIndex, AFlipInvertsToTheReversedDigit) {
  std::string why;
  auto inv = invert(parsed("1023 + ((-1)*x0) + 1024*x1"), flip_digits(), 65536, "a", &why);
  ASSERT_TRUE(inv) << why;
  EXPECT_EQ((*inv)[0], "(1023 - (a % 1024))");
  EXPECT_EQ((*inv)[1], "(a // 1024)");
}

TEST(FusionIndex, ATransposeInvertsToSwappedPlaces) {
  std::string why;
  auto inv = invert(parsed("x1 + 64*x0"), flip_digits(), 65536, "a", &why);
  ASSERT_TRUE(inv) << why;
  EXPECT_EQ((*inv)[0], "(a // 64)");
  EXPECT_EQ((*inv)[1], "(a % 64)");
}

TEST(FusionIndex, MapsThatAreNotBijectionsAreDeclinedWithTheReason) {
  std::string why;
  EXPECT_FALSE(invert(parsed("1024*x1"), flip_digits(), 65536, "a", &why));  // a broadcast: elements repeat
  EXPECT_NE(why.find("does not use digit x0"), std::string::npos) << why;
  EXPECT_FALSE(invert(parsed("1022 - x0 + 1024*x1"), flip_digits(), 65536, "a", &why));  // shifted out of range
  EXPECT_NE(why.find("shifted"), std::string::npos) << why;
  EXPECT_FALSE(invert(parsed("2*x0 + 1024*x1"), flip_digits(), 65536, "a", &why));  // strided: gaps
  EXPECT_NE(why.find("place"), std::string::npos) << why;
  std::vector<Digit> ds = {{"x0", 1, 0}};
  EXPECT_TRUE(complete(ds, 100, &why));
  EXPECT_EQ(ds[0].radix, 100);
  std::vector<Digit> gap = {{"x0", 1, 10}, {"x1", 20, 0}};
  EXPECT_FALSE(complete(gap, 200, &why));
}

TEST(FusionIndex, APaddedBufferInvertsByItsStrides) {
  // Rows of 1100 held 1152 apart (Inductor's padding): the flip reads `1099 - x0 + 1152*x1`. With the
  // buffer's layout the digits come back by the next place up; without it, or with strides the
  // index does not walk, declined.
  std::vector<Digit> ds = {{"x0", 1, 1100}, {"x1", 1100, 6}};
  std::vector<std::pair<int64_t, int64_t>> padded = {{6, 1152}, {1100, 1}};
  std::string why;
  auto inv = invert(parsed("1099 + ((-1)*x0) + 1152*x1"), ds, 6600, "a", &why, padded);
  ASSERT_TRUE(inv) << why;
  EXPECT_EQ((*inv)[0], "(1099 - (a % 1152))");
  EXPECT_EQ((*inv)[1], "(a // 1152)");
  EXPECT_FALSE(invert(parsed("1099 + ((-1)*x0) + 1152*x1"), ds, 6600, "a", &why));
  EXPECT_NE(why.find("a bijection needs 1100"), std::string::npos) << why;
  EXPECT_FALSE(invert(parsed("1099 + ((-1)*x0) + 1151*x1"), ds, 6600, "a", &why, padded));
  EXPECT_NE(why.find("does not walk the padded buffer"), std::string::npos) << why;  // not the buffer's stride
  EXPECT_FALSE(invert(parsed("1099 + ((-1)*x0) + 1280*x1"), ds, 6600, "a", &why, padded));
  EXPECT_NE(why.find("does not walk the padded buffer"), std::string::npos) << why;
  EXPECT_FALSE(invert(parsed("1099 + ((-1)*x0) + 1000*x1"), ds, 6600, "a", &why, padded));  // rows overlap
  EXPECT_NE(why.find("a bijection needs 1100"), std::string::npos) << why;
  EXPECT_FALSE(invert(parsed("1098 + ((-1)*x0) + 1152*x1"), ds, 6600, "a", &why, padded));
  EXPECT_NE(why.find("shifted"), std::string::npos) << why;
  // Only the outer stride padded (Inductor aligns strides above 1024 elements): rows of 431 held 431 apart,
  // planes of 1184 rows 510336 apart (not a multiple of 431), the flip reversing the rows.
  std::vector<Digit> planes = {{"x0", 1, 431}, {"x1", 431, 1184}, {"x2", 510304, 3}};
  std::vector<std::pair<int64_t, int64_t>> outer = {{3, 510336}, {1184, 431}, {431, 1}};
  auto p = invert(parsed("430 + ((-1)*x0) + 431*x1 + 510336*x2"), planes, 1530912, "a", &why, outer);
  ASSERT_TRUE(p) << why;
  // Modulo 431 alone would be wrong: 510336 is not a multiple of it (the planes' share first).
  EXPECT_EQ((*p)[0], "(430 - ((a % 510336) % 431))");
  EXPECT_EQ((*p)[1], "((a % 510336) // 431)");
  EXPECT_EQ((*p)[2], "(a // 510336)");
  // Two outer dims one after another in memory read as one digit: 197 x 2448 rows of 2161 held 2176 apart.
  std::vector<Digit> rows = {{"x0", 1, 2161}, {"x1", 2161, 482256}};
  std::vector<std::pair<int64_t, int64_t>> three = {{197, 5326848}, {2448, 2176}, {2161, 1}};
  auto r = invert(parsed("2160 + ((-1)*x0) + 2176*x1"), rows, 1042155216, "a", &why, three);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ((*r)[0], "(2160 - (a % 2176))");
  EXPECT_EQ((*r)[1], "(a // 2176)");
  // But not when the outer dim's stride leaves a gap after the inner one's span.
  three[0].second += 64;
  EXPECT_FALSE(invert(parsed("2160 + ((-1)*x0) + 2176*x1"), rows, 1042155216, "a", &why, three));
  EXPECT_NE(why.find("does not walk the padded buffer"), std::string::npos) << why;
  // A transposed read of a padded buffer: rows of 1100 held 1152 apart, read column by column.
  std::vector<Digit> cols = {{"x0", 1, 6}, {"x1", 6, 1100}};
  auto t = invert(parsed("1152*x0 + x1"), cols, 6600, "a", &why, padded);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ((*t)[0], "(a // 1152)");
  EXPECT_EQ((*t)[1], "(a % 1152)");
}

TEST(FusionEpilogue, TheFlipFoldsIntoTheScansStore) {
  auto b = corpus("reverse_cumsum");
  const ir::Artifact& a = *b->graphs.at(0);
  const ir::Function& f = *a.entry_function();
  auto rs = profile::regions(a, f, b->meta["graphs"][0]["args"]);
  ASSERT_EQ(rs.size(), 1u);
  RegionPlan plan = plan_region(a, f, rs[0]);
  // The fold with its store over the scan's names (flipped), then the same with the store through the
  // buffer's digits, the form every fold had before (the two differ here).
  ASSERT_EQ(plan.candidates.size(), 2u) << (plan.declined.empty() ? "" : plan.declined[0]);
  EXPECT_NE(plan.candidates[0].description.find("(its address over the producer's names)"), std::string::npos);
  EXPECT_EQ(plan.candidates[1].description.find("(its address"), std::string::npos);
  EXPECT_NE(plan.candidates[1].edit.source.find("tl.store(out_ptr0 + (1 * fuse_x0 + 1024 * fuse_x1), fuse_tmp0"),
            std::string::npos)
      << plan.candidates[1].edit.source;
  EXPECT_EQ(plan.candidates[1].edit.source.find("tl.flip("), std::string::npos);
  const stitch::RegionEdit& e = plan.candidates[0].edit;
  EXPECT_EQ(e.kernel, "triton_per_fused_cumsum_flip_0_poi_fused_flip_1");
  EXPECT_EQ(e.args, "arg0_1, buf1, 64, 1024");
  EXPECT_NE(e.source.find("fuse_x0 = (1023 - (fuse_a % 1024))"), std::string::npos) << e.source;
  // The persistent scan's store descends along r once written over its own names (1023 - r0_1 + 1024*x0): the
  // tile is stored flipped along r, lane R0_BLOCK - 1 - k at position k, so that the addresses ascend.
  EXPECT_NE(e.source.find("tl.store(out_ptr0 + (1023 - ((R0_BLOCK - 1) - r0_index) + 1024*x0), "
                          "tl.flip(tl.broadcast_to(fuse_tmp0, [XBLOCK, R0_BLOCK]), 1), xmask)"),
            std::string::npos)
      << e.source;

  // The module: the scan's launch replaced by the fused one (buf1 allocated before it), the flip's
  // launch, buf0's allocation and its del gone; nothing else changed.
  std::string m = stitch::stitch(a, {}, {}, {e});
  const std::string& orig = a.module->source();
  EXPECT_EQ(m.find("buf0"), std::string::npos);
  EXPECT_EQ(m.find("triton_poi_fused_flip_1.run("), std::string::npos);
  size_t alloc = m.find("buf1 = empty_strided_cuda");
  size_t launch = m.find("triton_per_fused_cumsum_flip_0_poi_fused_flip_1.run(arg0_1, buf1, 64, 1024, stream=stream0)");
  ASSERT_NE(alloc, std::string::npos);
  ASSERT_NE(launch, std::string::npos);
  EXPECT_LT(alloc, launch);
  // Everything up to the first fused kernel's declaration is the module's own text.
  const ir::Kernel* scan = a.find_kernel("triton_per_fused_cumsum_flip_0");
  EXPECT_EQ(m.substr(0, scan->decl.end.offset), orig.substr(0, scan->decl.end.offset));
  // The candidate module parses, with the fused kernel and one launch of it.
  auto c = ir::build(m, "candidate");
  ASSERT_NE(c->find_kernel(e.kernel), nullptr);
  EXPECT_EQ(c->entry_function()->launches.size(), 1u);
}

namespace {

std::unique_ptr<ir::Bundle> prologue_bundle() {
  return ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/transpose_scale_sum_inductor_form");
}

RegionPlan plan_of(const ir::Artifact& a, const nlohmann::json& args) {
  const ir::Function& f = *a.entry_function();
  auto rs = profile::regions(a, f, args);
  EXPECT_EQ(rs.size(), 1u);
  return plan_region(a, f, rs.at(0));
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST(FusionPrologue, TheScaledTransposeIsInlinedIntoTheSumsLoad) {
  auto b = prologue_bundle();
  const ir::Artifact& a = *b->graphs.at(0);
  RegionPlan plan = plan_of(a, b->meta["graphs"][0]["args"]);
  ASSERT_EQ(plan.candidates.size(), 1u) << joined(plan.declined);
  const RegionCandidate& c = plan.candidates[0];
  EXPECT_EQ(c.origin, "fusion:prologue");
  EXPECT_EQ(c.edit.args, "arg0_1, buf1, 64, 1024");  // the sum's buffer parameter now takes the producer's input
  const std::string& s = c.edit.source;
  for (const char* line : {"fuse_xindex = r0_1 + 1024*x0", "fuse_x0 = (fuse_xindex % 1024)",
                           "fuse_tmp0 = tl.load(in_ptr0 + (fuse_x1 + 64*fuse_x0), xmask, other=0)",
                           "fuse_tmp3 = fuse_tmp1 * fuse_tmp2",
                           "tmp0 = tl.where(xmask, (fuse_tmp3).to(tl.float32), 0.0)",
                           "'in_ptr0': '*bf16', 'out_ptr0': '*fp32'"})
    EXPECT_NE(s.find(line), std::string::npos) << line << "\n" << s;
  // The epilogue and the row merge decline the same pair, saying why (then the segment split or, for the pointwise
  // producer, the column loop each launch).
  std::vector<std::string> fusions;
  for (const std::string& d : plan.declined)
    if (d.rfind("split (", 0) != 0 && d.rfind("column loop (", 0) != 0) fusions.push_back(d);
  EXPECT_EQ(plan.declined.size() - fusions.size(), 2u);
  ASSERT_EQ(fusions.size(), 2u);
  EXPECT_NE(fusions[0].find("epilogue"), std::string::npos);
  EXPECT_NE(fusions[0].find("not pointwise"), std::string::npos) << fusions[0];
  EXPECT_NE(fusions[1].find("row_merge"), std::string::npos);
  EXPECT_NE(fusions[1].find("not a reduction"), std::string::npos) << fusions[1];
}

TEST(FusionPrologue, DeclinesWithTheReason) {
  auto b = prologue_bundle();
  const std::string& src = b->graphs.at(0)->module->source();
  auto declined = [&](const std::string& from, const std::string& to) {
    std::string m = src;
    size_t at = m.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    m.replace(at, from.size(), to);
    auto a = ir::build(m, "variant");
    RegionPlan plan = plan_of(*a, b->meta["graphs"][0]["args"]);
    EXPECT_TRUE(plan.candidates.empty());
    return joined(plan.declined);
  };
  // A producer load masked by something else than xmask: its mask differs from the consumer's.
  EXPECT_NE(declined("tl.load(in_ptr0 + (x1 + 64*x0), None)", "tl.load(in_ptr0 + (x1 + 64*x0), x0 < 512)")
                .find("the load of in_ptr0 has its own mask"),
            std::string::npos);
  // A producer that does not write the buffer in its own order: not a plain producer of the index the consumer reads.
  EXPECT_NE(declined("tl.store(out_ptr0 + (x2), tmp3, None)", "tl.store(out_ptr0 + (65535 - x2), tmp3, None)")
                .find("does not store at its own x index"),
            std::string::npos);
  // The consumer reading the buffer twice.
  EXPECT_NE(declined("    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])",
                     "    tmp9 = tl.load(in_ptr0 + (r0_1), xmask)\n"
                     "    tmp1 = tl.broadcast_to(tmp0 + tmp9, [XBLOCK, R0_BLOCK])")
                .find("uses in_ptr0 other than in one load"),
            std::string::npos);
  // An input not known to be aligned where the consumer's buffer was declared so.
  EXPECT_NE(declined("{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', "
                     "16]]}]",
                     "{(1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]")
                .find("declared 16-byte aligned"),
            std::string::npos);
  // The buffer read by a third launch (several consumers): no fusion at all.
  EXPECT_NE(declined("            del buf0\n",
                     "            triton_per_fused_sum_1.run(buf0, buf1, 64, 1024, stream=stream0)\n"
                     "            del buf0\n")
                .find("passed to 3 launches"),
            std::string::npos);
}

TEST(FusionEpilogue, APerKernelWinnerIsFusedFirstEveryStoreFolded) {
  // A winner for the scan that stores its first chunk and the rest separately (as the scan template
  // does): both stores fold; the kernel's own source comes second.
  auto b = corpus("reverse_cumsum");
  const ir::Artifact& a = *b->graphs.at(0);
  const ir::Function& f = *a.entry_function();
  const ir::Kernel& scan = *a.find_kernel("triton_per_fused_cumsum_flip_0");
  std::string store = "    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp3, xmask)";
  std::string winner = scan.source;
  size_t at = winner.find(store);
  ASSERT_NE(at, std::string::npos);
  winner.replace(at, store.size(), store + "\n    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp3, xmask & (r0_1 < 8))");
  auto rs = profile::regions(a, f, b->meta["graphs"][0]["args"]);
  RegionPlan plan = plan_region(a, f, rs.at(0), {{scan.name, winner}});
  ASSERT_EQ(plan.candidates.size(), 4u);  // on the winner and on the kernel's own source; each in both forms
  EXPECT_NE(plan.candidates[0].description.find("(on the per-kernel winners)"), std::string::npos);
  const std::string& s = plan.candidates[0].edit.source;
  // The second store's mask bounds r by a name of its own (r0_1 < 8), which the flipped store would have to
  // recompute: it stays in lane order, its address written over the scan's names all the same.
  EXPECT_NE(s.find("tl.store(out_ptr0 + (1023 - r0_1 + 1024*x0), fuse_tmp0, xmask & (r0_1 < 8))"),
            std::string::npos) << s;
  EXPECT_NE(s.find("tl.store(out_ptr0 + (1023 - ((R0_BLOCK - 1) - r0_index) + 1024*x0), "
                   "tl.flip(tl.broadcast_to(fuse_tmp0, [XBLOCK, R0_BLOCK]), 1), xmask)"),
            std::string::npos) << s;
  EXPECT_EQ(s.find("tl.store(out_ptr0 + (r0_1"), std::string::npos) << s;  // no store left into the buffer
  // Then the winner's fold through the buffer's digits, then the kernel's own source in both forms.
  EXPECT_NE(plan.candidates[1].edit.source.find("r0_1 < 8"), std::string::npos);
  EXPECT_NE(plan.candidates[1].description.find("(on the per-kernel winners)"), std::string::npos);
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(plan.candidates[i].edit.source.find("r0_1 < 8"), std::string::npos);
    EXPECT_EQ(plan.candidates[i].description.find("(on the per-kernel winners)"), std::string::npos);
  }
}

TEST(FusionEpilogue, AKernelsOwnSourceIsFusedUnderItsBaselineConfig) {
  // With the baseline's launch configs (the worker's launch records), the fused kernel built on the
  // scan's own source is pinned to the scan's config: loaded afresh it would autotune again, and a
  // scan settled under other warps adds (or multiplies) in another order.
  auto b = corpus("reverse_cumsum");
  const ir::Artifact& a = *b->graphs.at(0);
  const ir::Function& f = *a.entry_function();
  const ir::Kernel& scan = *a.find_kernel("triton_per_fused_cumsum_flip_0");
  auto rs = profile::regions(a, f, b->meta["graphs"][0]["args"]);
  nlohmann::json config = {{"XBLOCK", 8}, {"num_warps", 2}, {"num_stages", 1}};
  RegionPlan plan = plan_region(a, f, rs.at(0), {}, {{scan.name, config}});
  ASSERT_EQ(plan.candidates.size(), 2u);  // the store over the scan's names, and through the buffer's digits
  const std::string& s = plan.candidates[0].edit.source;
  EXPECT_NE(s.find("triton_heuristics.fixed_config(\n    config={'XBLOCK': 8, 'num_warps': 2, 'num_stages': 1}"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("triton_heuristics.persistent_reduction("), std::string::npos) << s;
  // Without them, the kernel's own heuristics decorator stays.
  RegionPlan unpinned = plan_region(a, f, rs.at(0));
  ASSERT_EQ(unpinned.candidates.size(), 2u);
  EXPECT_NE(unpinned.candidates[0].edit.source.find("triton_heuristics.persistent_reduction("), std::string::npos);
}

namespace {

// The fused store lines of an epilogue candidate's source (those through the consumer's output).
std::vector<std::string> fused_stores(const std::string& source) {
  std::vector<std::string> out;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (line.find("tl.store(") != std::string::npos) out.push_back(line.substr(line.find_first_not_of(' ')));
  return out;
}

}  // namespace

TEST(FusionEpilogue, ALoopedReversedScanStoresItsTileFlippedAtAscendingAddresses) {
  // A reversed cumprod over the last dim of a transposed bf16 tensor (captured on the CPU with torch 2.13): the
  // looped scan writes rows of 1100 held 1152 apart, the flip reads them back reversed. Written through the
  // inverse's `%` and `//` the fused store was one scalar store per lane and ran 0.83x the unfused pair on an
  // H100; composed over the scan's names it is 1099 - r0_2 + 1100*x3, descending along r, so the chunk is
  // stored flipped and its r0_mask recomputed at the flipped r.
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "engine/tests/data/cumprod_rev_transposed_cpu").string());
  const ir::Artifact& a = *b->graphs.at(0);
  const ir::Function& f = *a.entry_function();
  auto rs = profile::regions(a, f, b->meta["graphs"][0]["args"]);
  ASSERT_EQ(rs.size(), 1u);
  RegionPlan plan = plan_region(a, f, rs.at(0));
  ASSERT_EQ(plan.candidates.size(), 2u) << joined(plan.declined);  // then the digits' form
  EXPECT_EQ(plan.candidates[0].origin, "fusion:epilogue");
  const std::string& s = plan.candidates[0].edit.source;
  std::vector<std::string> stores = fused_stores(s);
  ASSERT_EQ(stores.size(), 1u) << s;
  EXPECT_EQ(stores[0],
            "tl.store(out_ptr0 + (1099 - (r0_offset + (R0_BLOCK - 1) - r0_base) + 1100*x3), "
            "tl.flip(tl.broadcast_to(fuse_tmp0, [XBLOCK, R0_BLOCK]), 1), "
            "((r0_offset + (R0_BLOCK - 1) - r0_base) < r0_numel) & xmask)");
  std::string address = stores[0].substr(0, stores[0].find("tl.flip("));
  EXPECT_EQ(address.find('%'), std::string::npos) << address;
  EXPECT_EQ(address.find("//"), std::string::npos) << address;
  EXPECT_EQ(stores[0].find("r0_mask"), std::string::npos);  // the lane-order mask is not flipped as a value
  // The consumer's digits stay defined (its other loads and statements may read them; here nothing does).
  EXPECT_NE(s.find("fuse_x0 = (1099 - (fuse_a % 1152))"), std::string::npos) << s;
  // The store sits in the r loop, where r0_offset and r0_base are the chunk's.
  EXPECT_LT(s.find("for r0_offset in tl.range(0, r0_numel, R0_BLOCK):"), s.find("tl.flip("));
}

TEST(FusionEpilogue, AStoreWhoseDigitsDoNotSimplifyKeepsThem) {
  // The scan's r index made to range over 2048 (its r0_numel edited): the address's low part, r0_1, no longer
  // stays below 1024, so `fuse_a % 1024` is not r0_1 and the store keeps the inverse's digits as written.
  auto b = corpus("reverse_cumsum");
  std::string m = kopt::testing::replaced(b->graphs.at(0)->module->source(), "    r0_numel = 1024\n",
                                          "    r0_numel = 2048\n");
  auto a = ir::build(m, "variant");
  RegionPlan plan = plan_of(*a, b->meta["graphs"][0]["args"]);
  ASSERT_EQ(plan.candidates.size(), 1u) << joined(plan.declined);  // the digits' form would be the same text
  std::vector<std::string> stores = fused_stores(plan.candidates[0].edit.source);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0], "tl.store(out_ptr0 + (1 * fuse_x0 + 1024 * fuse_x1), fuse_tmp0, xmask)");
  // A name the address only carries in its high part needs no range: without the constant xnumel, x0 = xindex
  // has none, and `fuse_a // 1024` is x0 all the same.
  std::string unranged = kopt::testing::replaced(b->graphs.at(0)->module->source(), "    xnumel = 64\n", "");
  auto u = ir::build(unranged, "variant");
  RegionPlan up = plan_of(*u, b->meta["graphs"][0]["args"]);
  ASSERT_EQ(up.candidates.size(), 2u) << joined(up.declined);
  EXPECT_NE(up.candidates[0].edit.source.find("tl.store(out_ptr0 + (1023 - ((R0_BLOCK - 1) - r0_index) + 1024*x0), "),
            std::string::npos)
      << up.candidates[0].edit.source;
}
