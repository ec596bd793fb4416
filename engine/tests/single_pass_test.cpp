// The single-pass rewrite of looped reductions (agents/coder/rewrites/single_pass.h) on corpus kernels:
// it applies where a later pass re-loads a row that fits one block, declines with its reason
// otherwise, and its candidates pass G1. Correctness through G2/G3: tests/python/test_rewrites.py.
#include "agents/coder/rewrites/single_pass.h"
#include "agents/coder/rewrites/softmax_folds.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "artifact/bundle.h"
#include "profile/family.h"
#include "test_util.h"
#include "verify/static/g1.h"

using namespace kopt;
namespace fs = std::filesystem;
using kopt::testing::corpus;
using kopt::testing::replaced;

namespace {

const char* kSoftmax = "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0";

TEST(SinglePass, SoftmaxReadsEachRowOnce) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto sp = agents::rewrites::single_pass(k.source, k.name, {}, &why);
  ASSERT_TRUE(sp) << why;
  EXPECT_EQ(sp->block, 8192);
  EXPECT_EQ(sp->reloads, 1);
  EXPECT_EQ(sp->source.find("for r0_offset"), std::string::npos);
  EXPECT_NE(sp->source.find("tmp4 = tmp0\n"), std::string::npos);
  EXPECT_EQ(sp->source.find("evict_last"), std::string::npos);  // the row need not stay in cache
  EXPECT_EQ(sp->source.find("R0_BLOCK]"), std::string::npos);   // every block shape is the kernel's own
  // The one combine on fresh accumulators, folded to its closed form (no exps left in it).
  EXPECT_EQ(sp->combines, 1);
  EXPECT_EQ(sp->source.find("online_softmax_combine"), std::string::npos);
  EXPECT_NE(sp->source.find("_tmp2_max_next = tmp1\n"), std::string::npos) << sp->source;
  EXPECT_NE(sp->source.find("_tmp2_sum_next = tl.where(tmp1 == float('-inf'), 1.0, (tmp1 - tmp1) + 1.0)"),
            std::string::npos);
  // The reduce written out, its exps the output's: one exp per element.
  EXPECT_EQ(sp->shared_exps, 1);
  EXPECT_EQ(sp->source.find("online_softmax_reduce"), std::string::npos);
  EXPECT_NE(sp->source.find("    tmp2 = triton_helpers.max2(_tmp2_max, 1)\n    _kopt_m0 = tmp2[:, None]\n"
                            "    _kopt_d0 = tmp0 - _kopt_m0\n    _kopt_e0 = libdevice.exp(_kopt_d0)\n"
                            "    tmp3 = tl.sum(_tmp2_sum * tl.where(_kopt_m0 == float('-inf'), 1.0, _kopt_e0), 1)\n"),
            std::string::npos)
      << sp->source;
  EXPECT_EQ(sp->recomputed, 3);  // tmp2[:, None], tmp4 - tmp2, exp(...) of the output pass
  EXPECT_NE(sp->source.find("tmp6 = _kopt_e0\n    tmp7 = (tmp6 / tmp3)"), std::string::npos) << sp->source;
}

const char* kAlibi = "triton_red_fused__softmax__to_copy_add_exp_gt_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_view_0";

std::string alibi_source() {
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/alibi_softmax_bf16_small");
  return b->graphs[0]->kernels.at(0).source;
}

TEST(SinglePass, TheOutputPassReusesTheFirstPasssElementwiseChain) {
  // Inductor's masked ALiBi softmax recomputes the mask, scale and bias from the reloaded scores in
  // its output pass; with the loads reused, each of those expressions is the first pass's.
  std::string src = alibi_source(), why;
  auto sp = agents::rewrites::single_pass(src, kAlibi, {}, &why);
  ASSERT_TRUE(sp) << why;
  EXPECT_EQ(sp->reloads, 2);
  EXPECT_EQ(sp->recomputed, 14);
  for (const char* reused : {"tmp19 = tmp2\n", "tmp20 = tmp3\n", "tmp21 = tmp4\n", "tmp22 = tmp5\n",
                             "tmp28 = tmp12\n", "tmp30 = tmp14\n", "tmp31 = _kopt_d0\n", "tmp32 = _kopt_e0\n"})
    EXPECT_NE(sp->source.find(reused), std::string::npos) << reused << sp->source;
  EXPECT_NE(sp->source.find("_kopt_d0 = tmp14 - _kopt_m0"), std::string::npos) << sp->source;  // V, not the accumulator
  // A value changed between the passes is not reused: the output pass's conversion of tmp19 is its own.
  std::string changed = replaced(src, "    tmp16, tmp17 = triton_helpers", "    tmp3 = tmp3 + 1.0\n    tmp16, tmp17 = triton_helpers");
  auto sp2 = agents::rewrites::single_pass(changed, kAlibi, {}, &why);
  ASSERT_TRUE(sp2) << why;
  EXPECT_NE(sp2->source.find("tmp19 = tmp2\n"), std::string::npos);
  EXPECT_NE(sp2->source.find("tmp20 = tmp19.to(tl.float32)\n"), std::string::npos) << sp2->source;
  EXPECT_LT(sp2->recomputed, sp->recomputed);
  // A call to a function whose body is not seen may have effects: each call stays.
  std::string opaque = replaced(replaced(src, "tmp12 = tmp9 + tmp11", "tmp12 = bias(tmp9, tmp11)"),
                                "tmp28 = tmp26 + tmp27", "tmp28 = bias(tmp26, tmp27)");
  auto sp3 = agents::rewrites::single_pass(opaque, kAlibi, {}, &why);
  ASSERT_TRUE(sp3) << why;
  EXPECT_NE(sp3->source.find("tmp28 = bias(tmp26, tmp27)\n"), std::string::npos) << sp3->source;
  EXPECT_NE(sp3->source.find("tmp27 = tmp11\n"), std::string::npos);  // the pure ones around it still are reused
}

TEST(SinglePass, ALoadConvertedWhereItIsMadeIsReusedOnlyWithTheSameConversion) {
  // Inductor writes a narrow load as `tl.load(...).to(tl.float32)`: the second pass's identical load
  // and conversion reuses the first's value; a different conversion is a different value.
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  const std::string first = "eviction_policy='evict_last', other=0.0)", second = "eviction_policy='evict_first', other=0.0)";
  std::string converted = replaced(replaced(k.source, first, first + ".to(tl.float32)"), second, second + ".to(tl.float32)");
  std::string why;
  auto sp = agents::rewrites::single_pass(converted, k.name, {}, &why);
  ASSERT_TRUE(sp) << why;
  EXPECT_EQ(sp->reloads, 1);
  EXPECT_NE(sp->source.find("tmp4 = tmp0\n"), std::string::npos) << sp->source;
  std::string differs = replaced(k.source, second, second + ".to(tl.float16)");
  EXPECT_FALSE(agents::rewrites::single_pass(replaced(differs, first, first + ".to(tl.float32)"), k.name, {}, &why));
  EXPECT_NE(why.find("no pass re-loads"), std::string::npos) << why;
}

TEST(SinglePass, CandidatesPinConfigsAndPassG1) {
  auto b = corpus("layer_norm_large");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  std::string why;
  auto cands = agents::rewrites::single_pass_candidates(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_EQ(c.origin, "rewrite");
    EXPECT_EQ(c.config["R0_BLOCK"], 4096);
    EXPECT_LE(c.config["XBLOCK"].get<int64_t>() * 4096, agents::rewrites::kMaxSinglePassRow);
    auto g1 = verify::run_g1(*p.kernel, c.source);
    EXPECT_TRUE(g1.passed) << c.description;
  }
}

TEST(SinglePass, DeclinesWithItsReason) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  // Rows longer than one block holds.
  EXPECT_FALSE(agents::rewrites::single_pass(replaced(k.source, "r0_numel = 8192", "r0_numel = 16384"), k.name, {},
                                             &why));
  EXPECT_NE(why.find("do not fit one block"), std::string::npos) << why;
  // The first pass writes through the pointer the second pass reads: the reload must stay.
  std::string stores = replaced(k.source, "        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n",
                                "        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n"
                                "        tl.store(in_ptr0 + (r0_1 + 8192*x0), tmp1 + 1.0, r0_mask)\n");
  EXPECT_FALSE(agents::rewrites::single_pass(stores, k.name, {}, &why));
  EXPECT_NE(why.find("no pass re-loads"), std::string::npos) << why;
  // The second pass loads with another fill value: not the same tensor.
  std::string fill = replaced(k.source, "eviction_policy='evict_first', other=0.0)",
                              "eviction_policy='evict_first', other=1.0)");
  EXPECT_FALSE(agents::rewrites::single_pass(fill, k.name, {}, &why));
  EXPECT_NE(why.find("no pass re-loads"), std::string::npos) << why;
  // A store through another pointer between the passes changes nothing the second pass reads.
  std::string other = replaced(k.source, "        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n",
                               "        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n"
                               "        tl.store(out_ptr2 + (r0_1 + 8192*x0), tmp1, r0_mask)\n");
  EXPECT_TRUE(agents::rewrites::single_pass(other, k.name, {}, &why)) << why;
  // An index each pass computes from memory is a new value in each pass, even written the same way.
  std::string from_memory = k.source;
  for (int pass = 0; pass < 2; ++pass)
    from_memory = replaced(from_memory, "        r0_1 = r0_index\n",
                           "        r0_1 = r0_index + (tl.load(in_ptr0) * 0).to(tl.int32)\n");
  EXPECT_FALSE(agents::rewrites::single_pass(from_memory, k.name, {}, &why));
  EXPECT_NE(why.find("no pass re-loads"), std::string::npos) << why;
  // A pointwise kernel has no passes.
  auto g = corpus("gelu_scale");
  EXPECT_FALSE(agents::rewrites::single_pass(g->graphs[0]->kernels.at(0).source, g->graphs[0]->kernels.at(0).name,
                                             {}, &why));
  EXPECT_NE(why.find("not a looped reduction"), std::string::npos) << why;
}

TEST(SinglePass, RowLengthFromTheLaunchesWhenTheKernelDoesNotFixIt) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  agents::KernelProfile p;
  p.kernel = &k;
  p.family = "softmax";
  // The kernel as Inductor writes it for dynamic shapes: no `r0_numel = 8192` line.
  ir::Kernel dynamic = k;
  dynamic.source = replaced(k.source, "    r0_numel = 8192\n", "");
  p.kernel = &dynamic;
  std::string why;
  EXPECT_TRUE(agents::rewrites::single_pass_candidates(p, &why).empty());  // no launch recorded
  EXPECT_NE(why.find("row length"), std::string::npos) << why;
  using kopt::testing::tensor;
  using kopt::testing::value;
  p.launches = {{{"args", {tensor({64, 2000}), tensor({64, 2000}), value(64), value(2000)}}}};
  auto cands = agents::rewrites::single_pass_candidates(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  EXPECT_NE(cands[0].source.find("R0_ALL: tl.constexpr = 2048"), std::string::npos);
  // Rows of 2000 in blocks of 2048: the accumulator's mask is not all-true, so the masked lanes'
  // -inf are not the row's values and the reduce stays the helper's.
  EXPECT_NE(cands[0].source.find("online_softmax_reduce"), std::string::npos);
}

}  // namespace

TEST(SinglePass, FastExpVariantsOfTheFewRowInstancesSwapOnlyTheExp) {
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/alibi_softmax_bf16_small");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  std::string why;
  auto cands = agents::rewrites::single_pass_candidates(p, &why);
  size_t fast = 0;
  for (const auto& c : cands) {
    if (!c.description.starts_with("fast exp (tl.exp for libdevice.exp), ")) continue;
    ++fast;
    EXPECT_EQ(c.source.find("libdevice.exp("), std::string::npos);
    EXPECT_NE(c.source.find("_kopt_e0 = tl.exp(_kopt_d0)"), std::string::npos) << c.source;
    // Its twin: the same instance with libdevice's exp.
    std::string twin = c.description.substr(std::string("fast exp (tl.exp for libdevice.exp), ").size());
    auto it = std::find_if(cands.begin(), cands.end(), [&](const agents::Candidate& o) { return o.description == twin; });
    ASSERT_NE(it, cands.end()) << twin;
    EXPECT_EQ(std::regex_replace(it->source, std::regex(R"(\blibdevice\.exp\()"), "tl.exp("), c.source);
    EXPECT_LE(c.config["XBLOCK"].get<int64_t>(), 2) << c.description;
    EXPECT_LE(c.config["num_warps"].get<int>(), 4) << c.description;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  EXPECT_EQ(fast, 5u);  // rows of 64: one row per program at one and two warps, two at one, two and four
}

TEST(SinglePass, LeanVariantsRewriteOnlyTheSharedReducesArithmetic) {
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/alibi_softmax_bf16_small");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  std::string why;
  auto sp = agents::rewrites::single_pass(p.kernel->source, p.kernel->name, {}, &why);
  ASSERT_TRUE(sp) << why;
  ASSERT_FALSE(sp->lean_source.empty());
  // Four lines differ from the single pass, each the lean form of its own.
  std::string lean = sp->lean_source;
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"triton_helpers.max2(_tmp16_max, 1)", "tl.max(_tmp16_max, 1)"},
           {"_kopt_e0 = libdevice.exp(_kopt_d0)", "_kopt_e0 = tl.math.exp2(_kopt_d0 * 1.4426950408889634)"},
           {"tl.sum(_tmp16_sum * tl.where(_kopt_m0 == float('-inf'), 1.0, _kopt_e0), 1)", "tl.sum(_kopt_e0, 1)"},
           {"(tmp32 / tmp17)", "((tmp32 * (1.0 / tmp17)))"}})
    lean = replaced(lean, to, from);
  EXPECT_EQ(lean, sp->source);
  auto cands = agents::rewrites::single_pass_candidates(p, &why);
  size_t n = 0;
  for (const auto& c : cands) {
    if (!c.description.starts_with("lean softmax (")) continue;
    ++n;
    EXPECT_LE(c.config["XBLOCK"].get<int64_t>(), 2) << c.description;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  EXPECT_EQ(n, 5u);  // the fast-exp instances'

  // The sum used other than as the exps' divisor (stored): no lean form. The max used elsewhere: the
  // sum lean, the max still NaN-propagating.
  auto folded = [&](const std::string& src) {
    auto ks = ir::parse_kernel_source(src, p.kernel->name, p.kernel->name);
    return agents::rewrites::lean_softmax(src, ks.entry);
  };
  ASSERT_NE(sp->source.find("tmp33 = (tmp32 / tmp17)"), std::string::npos) << sp->source;
  std::string anchor = sp->source.substr(sp->source.rfind("    tl.store("));
  std::string stores_sum = replaced(sp->source, anchor, anchor + "    tl.store(in_ptr1 + x4, tmp17)\n");
  EXPECT_EQ(folded(stores_sum).folded, 0);
  std::string stores_max = replaced(sp->source, anchor, anchor + "    tl.store(in_ptr1 + x4, tmp16)\n");
  auto lm = folded(stores_max);
  EXPECT_EQ(lm.folded, 1);
  EXPECT_NE(lm.source.find("triton_helpers.max2(_tmp16_max, 1)"), std::string::npos);
  EXPECT_NE(lm.source.find("tl.sum(_kopt_e0, 1)"), std::string::npos);
}

TEST(SinglePass, ColumnsOfUpTo4096RowsGetTilesOf16ColumnsWhereNoTileOf32Fits) {
  // The fp16 L1 normalize down 100 columns (`x0 + 100*r0_1`) made 3000 rows long: blocks of 4096, so 32 columns
  // would hold 131072 values a program; 16 columns (a 32-byte sector of fp16) over 32 warps hold 64 a thread.
  fs::path dir = fs::temp_directory_path() / "kopt_single_pass_16_columns";
  fs::remove_all(dir);
  fs::copy(fs::path(KOPT_SOURCE_DIR) / "tests/python/data/l1_normalize_columns_fp16_inductor_form", dir,
           fs::copy_options::recursive);
  std::string text = kopt::testing::read((dir / "module_0.py").string());
  std::ofstream(dir / "module_0.py") << std::regex_replace(text, std::regex(R"(\b8192\b)"), "3000");
  auto b = ir::load_bundle(dir.string());
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  std::string why;
  auto cands = agents::rewrites::single_pass_candidates(p, &why);
  std::vector<std::string> wide;
  for (const auto& c : cands)
    if (c.config["XBLOCK"].get<int64_t>() >= 16) wide.push_back(c.description);
  ASSERT_EQ(wide.size(), 1u) << why;
  EXPECT_NE(wide[0].find("XBLOCK=16 R0_BLOCK=4096 num_warps=32"), std::string::npos) << wide[0];
  fs::remove_all(dir);
}
