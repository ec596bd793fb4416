// Source rewrites of Inductor's own kernels (agents/coder/rewrites/rewrites.h) on corpus kernels:
// each applies where it should, declines with its reason otherwise, and passes G1.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/agent.h"
#include "agents/coder/builtin.h"
#include "agents/coder/rewrites/masked_modulo.h"
#include "agents/coder/rewrites/proven_masks.h"
#include "agents/coder/rewrites/rewrites.h"
#include "agents/coder/rewrites/row_tiles.h"
#include "agents/coder/rewrites/softmax_chunks.h"
#include "agents/coder/rewrites/softplus.h"
#include "agents/coder/rewrites/tail_mask.h"
#include "agents/coder/rewrites/transposed_tile.h"
#include "agents/coder/rewrites/welford_chunks.h"
#include "agents/coder/rewrites/x_order.h"
#include "agents/planner/builtin.h"
#include "agents/tuner/builtin.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "verify/cascade.h"
#include "verify/static/g1.h"
#include "test_util.h"

using namespace kopt;
using nlohmann::json;
using kopt::testing::corpus;
using kopt::testing::tensor;
using kopt::testing::value;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// softmax_large's kernel with Inductor's 64-bit index widening put in (what it writes when a
// numel may exceed 2^31): the program-id offset and the reduction base are cast to int64.
std::string widened(const std::string& src) {
  std::string s = src;
  auto sub = [&](const std::string& from, const std::string& to) {
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) s.replace(p, from.size(), to);
  };
  sub("xoffset = tl.program_id(0) * XBLOCK", "xoffset = tl.program_id(0).to(tl.int64) * XBLOCK");
  sub("r0_base = tl.arange(0, R0_BLOCK)[None, :]", "r0_base = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)");
  return s;
}

json softmax_launch(int64_t rows, int64_t cols) {
  return {{"args", {tensor({rows, cols}), tensor({rows, cols}), value(rows), value(cols)}}};
}

}  // namespace

TEST(Rewrites, Int32IndexingDropsTheWideningWhenLaunchesAreSmall) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string src = widened(k.source);
  ASSERT_EQ(count(src, ".to(tl.int64)"), 2u);
  std::string why;
  auto out = agents::rewrites::int32_indexing(src, k.name, {softmax_launch(8192, 8192)}, &why);
  ASSERT_TRUE(out) << why;
  EXPECT_EQ(*out, k.source);  // exactly the casts removed, nothing else touched
  EXPECT_TRUE(verify::run_g1(k, *out).passed);
}

TEST(Rewrites, Int32IndexingDeclinesWhatItCannotProve) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string src = widened(k.source), why;
  // 65536 x 32768 elements: the span reaches 2^31.
  EXPECT_FALSE(agents::rewrites::int32_indexing(src, k.name, {softmax_launch(8192, 8192), softmax_launch(65536, 32768)},
                                                &why));
  EXPECT_NE(why.find("spans"), std::string::npos) << why;
  EXPECT_NE(why.find("2^30"), std::string::npos) << why;
  // A numel passed as an int above the bound.
  json l = softmax_launch(8192, 8192);
  l["args"][2] = value(int64_t{3} << 30);
  EXPECT_FALSE(agents::rewrites::int32_indexing(src, k.name, {l}, &why));
  EXPECT_NE(why.find("argument 3"), std::string::npos) << why;
  // No launch recorded: nothing bounds the indices.
  EXPECT_FALSE(agents::rewrites::int32_indexing(src, k.name, {}, &why));
  EXPECT_NE(why.find("no recorded launch"), std::string::npos) << why;
  // The kernel as Inductor wrote it has no widening.
  EXPECT_FALSE(agents::rewrites::int32_indexing(k.source, k.name, {softmax_launch(8192, 8192)}, &why));
  EXPECT_NE(why.find("does not widen"), std::string::npos) << why;
  // cross_entropy casts loaded values (labels) to int64: those are data, not indices, and stay.
  auto ce = corpus("cross_entropy");
  int checked = 0;
  for (const ir::Kernel& ck : ce->graphs[0]->kernels) {
    if (ck.source.find(".to(tl.int64)") == std::string::npos) continue;
    ++checked;
    json big = {{"args", {tensor({64, 1000})}}};
    EXPECT_FALSE(agents::rewrites::int32_indexing(ck.source, ck.name, {big}, &why)) << ck.name;
    EXPECT_NE(why.find("does not widen"), std::string::npos) << why;
  }
  EXPECT_GT(checked, 0);
}

TEST(Rewrites, EvictionHintsOnATwoPassSoftmax) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto vs = agents::rewrites::eviction_hints(k.source, k.name, &why);
  // Inductor already wrote evict_last/evict_first here, so only the hint-free variant differs.
  ASSERT_EQ(vs.size(), 1u) << why;
  EXPECT_EQ(vs[0].first, "eviction hints removed");
  EXPECT_EQ(count(vs[0].second, "eviction_policy"), 0u);
  EXPECT_EQ(count(vs[0].second, "tl.load(in_ptr0 + (r0_1 + 8192*x0), r0_mask, other=0.0)"), 2u);
  EXPECT_TRUE(verify::run_g1(k, vs[0].second).passed);
  // On the hint-free source the two-pass variant adds the keyword back as the last argument.
  auto back = agents::rewrites::eviction_hints(vs[0].second, k.name, &why);
  ASSERT_EQ(back.size(), 1u) << why;
  EXPECT_EQ(count(back[0].second, "r0_mask, other=0.0, eviction_policy='evict_last')"), 1u);
  EXPECT_EQ(count(back[0].second, "r0_mask, other=0.0, eviction_policy='evict_first')"), 1u);
  EXPECT_TRUE(verify::run_g1(k, back[0].second).passed);
}

TEST(Rewrites, EvictionHintsOnLayerNorm) {
  auto b = corpus("layer_norm_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto vs = agents::rewrites::eviction_hints(k.source, k.name, &why);
  ASSERT_EQ(vs.size(), 2u) << why;
  // Last pass: every load evict_first, weights and bias included.
  EXPECT_NE(vs[0].second.find("tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_first', other=0.0)"),
            std::string::npos);
  EXPECT_EQ(count(vs[0].second, "evict_last"), 1u);
  EXPECT_EQ(count(vs[1].second, "eviction_policy"), 0u);
  for (const auto& [d, s] : vs) {
    auto g1 = verify::run_g1(k, s);
    EXPECT_TRUE(g1.passed) << d;
  }
}

TEST(Rewrites, EvictionHintsDeclineWithoutTwoPasses) {
  std::string why;
  auto g = corpus("gelu_scale");
  const ir::Kernel& pk = g->graphs[0]->kernels.at(0);
  EXPECT_TRUE(agents::rewrites::eviction_hints(pk.source, pk.name, &why).empty());
  EXPECT_NE(why.find("not a looped reduction"), std::string::npos) << why;
  EXPECT_TRUE(agents::rewrites::eviction_hints("def broken(:\n", "broken", &why).empty());
  EXPECT_FALSE(why.empty());
}

TEST(Rewrites, LoopStagesGiveEachLoadingReductionLoopItsOwnCount) {
  // The two-pass softmax: both loops load, so both get the count; the text is otherwise unchanged.
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto vs = agents::rewrites::loop_stages(k.source, k.name, &why);
  ASSERT_EQ(vs.size(), 2u) << why;
  EXPECT_EQ(vs[0].first, "loop stages: 2 reduction loop(s) pipelined over 2 stages");
  EXPECT_EQ(vs[1].first, "loop stages: 2 reduction loop(s) pipelined over 3 stages");
  EXPECT_EQ(count(k.source, "tl.range(0, r0_numel, R0_BLOCK):"), 2u);
  EXPECT_EQ(count(vs[1].second, "tl.range(0, r0_numel, R0_BLOCK, num_stages=3):"), 2u);
  std::string back = vs[1].second;
  for (size_t at; (at = back.find(", num_stages=3")) != std::string::npos;) back.erase(at, 14);
  EXPECT_EQ(back, k.source);
  for (const auto& [d, s] : vs) EXPECT_TRUE(verify::run_g1(k, s).passed) << d;
  // A loop that already has a count is left alone: nothing to rewrite on the rewritten source.
  EXPECT_TRUE(agents::rewrites::loop_stages(vs[0].second, k.name, &why).empty());
  EXPECT_NE(why.find("no `tl.range` loop"), std::string::npos) << why;
  // A pointwise kernel has no loop.
  auto g = corpus("gelu_scale");
  const ir::Kernel& pk = g->graphs[0]->kernels.at(0);
  EXPECT_TRUE(agents::rewrites::loop_stages(pk.source, pk.name, &why).empty());
}

TEST(Rewrites, PlannerAndCoder) {
  auto b = corpus("softmax_large");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {softmax_launch(8192, 8192)};
  agents::Plan plan = agents::BuiltinPlanner().plan(p);
  auto at = [&](const std::string& s) { return std::find(plan.strategies.begin(), plan.strategies.end(), s); };
  ASSERT_NE(at("rewrite:source"), plan.strategies.end());
  EXPECT_LT(at("template:softmax"), at("rewrite:source"));
  EXPECT_LT(at("rewrite:source"), at("config"));
  // The whole plan: strategies merged round-robin, so the first batch screened holds the head of
  // each (a template, the rewrite, a launch config), not one strategy's whole list.
  auto all = agents::BuiltinCoder().propose(p, plan);
  ASSERT_GE(all.size(), 6u);
  std::vector<std::string> heads;
  for (size_t i = 0; i < 3; ++i) heads.push_back(all[i].origin);
  EXPECT_EQ(heads, (std::vector<std::string>{"template:softmax", "rewrite", "config"})) << fmt::format("{}", fmt::join(heads, ","));
  EXPECT_TRUE(all[3].origin.starts_with("template") && all[4].origin == "rewrite" && all[5].origin == "config")
      << all[3].origin << all[4].origin << all[5].origin;
  auto cands = agents::BuiltinCoder().propose(p, agents::Plan{{"rewrite:source"}, {}, ""});
  ASSERT_GE(cands.size(), 2u);
  // The single-pass rewrite first, its launch configs pinned (single_pass_test.cpp), then the hint
  // variant, the two stage counts of the loops and the online softmax kept as one max a chunk.
  ASSERT_GE(cands.size(), 5u);
  for (size_t i = 0; i + 4 < cands.size(); ++i) {
    const std::string& d = cands[i].description;
    EXPECT_TRUE(d.starts_with("single pass") || d.starts_with("fast exp (tl.exp for libdevice.exp), single pass") ||
                (d.starts_with("lean softmax (") && d.find("), single pass") != std::string::npos))
        << d;
    EXPECT_NE(cands[i].source.find("fixed_config"), std::string::npos);
  }
  std::vector<std::string> last4;
  for (size_t i = cands.size() - 4; i < cands.size(); ++i) {
    last4.push_back(cands[i].description);
    EXPECT_EQ(cands[i].origin, "rewrite");
    EXPECT_TRUE(cands[i].config.is_null());  // Inductor's heuristics decorator stays
    EXPECT_NE(cands[i].source.find("@triton_heuristics.reduction("), std::string::npos);
  }
  EXPECT_EQ(last4, (std::vector<std::string>{
                       "eviction hints removed", "loop stages: 2 reduction loop(s) pipelined over 2 stages",
                       "loop stages: 2 reduction loop(s) pipelined over 3 stages",
                       "softmax chunks: 1 per-element online softmax update(s) as one max a chunk (one exp an element)"}));

  // A pointwise kernel without widening, passes or GELU sums: no rewrite, each rewrite's reason kept.
  auto g = corpus("sigmoid_residual");
  p.kernel = &g->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", {tensor({65536}), tensor({65536}), tensor({65536}), value(65536)}}}};
  std::string why;
  EXPECT_TRUE(agents::rewrites::candidates(p, &why).empty());
  EXPECT_NE(why.find("int32 indexing"), std::string::npos) << why;
  EXPECT_NE(why.find("eviction hints"), std::string::npos) << why;
  EXPECT_NE(why.find("one plus: no libdevice.erf"), std::string::npos) << why;
  plan = agents::BuiltinPlanner().plan(p);
  EXPECT_EQ(std::find(plan.strategies.begin(), plan.strategies.end(), "rewrite:source"), plan.strategies.end());
  // ... and in the plan, for report.json's `declined`.
  ASSERT_FALSE(plan.declined.empty());
  EXPECT_TRUE(plan.declined.back().starts_with("rewrite: ")) << plan.declined.back();
  EXPECT_NE(plan.declined.back().find("eviction hints"), std::string::npos) << plan.declined.back();

  // A family template that declines the kernel (its input's rows are not contiguous) is not a
  // strategy; its reason is in the plan.
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  json transposed = softmax_launch(8192, 8192);
  transposed["args"][0]["stride"] = {1, 8192};
  p.launches = {transposed};
  plan = agents::BuiltinPlanner().plan(p);
  EXPECT_EQ(std::find(plan.strategies.begin(), plan.strategies.end(), "template:softmax"), plan.strategies.end());
  ASSERT_FALSE(plan.declined.empty());
  EXPECT_TRUE(plan.declined.front().starts_with("template:softmax: ")) << plan.declined.front();
  EXPECT_NE(plan.declined.front().find("not contiguous"), std::string::npos) << plan.declined.front();
}

TEST(Rewrites, XOrderMovesEachDigitOfAReductionsRowsToTheFront) {
  // mean_dim0's reduction numbers its 512 rows as (x1 = xindex // 256, x0 = xindex % 256): the one
  // other order hands x1 out fastest; the lanes' index is a bijection of the program index and the
  // mask stays on the program index.
  auto b = corpus("mean_dim0");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto xo = agents::rewrites::x_order(k.source, k.name, &why);
  ASSERT_EQ(xo.size(), 1u) << why;
  EXPECT_EQ(xo[0].first, "x order: the digit of stride 256 (2 values) fastest");
  const std::string& s = xo[0].second;
  EXPECT_NE(s.find("xlin = xoffset + tl.arange(0, XBLOCK)[:, None]\n    xindex = (xlin % 2) * 256 + (xlin // 2)\n"),
            std::string::npos) << s;
  EXPECT_NE(s.find("xmask = xlin < xnumel"), std::string::npos);
  EXPECT_EQ(count(s, "xindex < xnumel"), 0u);
  EXPECT_TRUE(verify::run_g1(k, s).passed);
}

TEST(Rewrites, XOrderDeclinesWithItsReason) {
  auto b = corpus("mean_dim0");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  // Program order matters to a kernel with atomics.
  std::string atomic = k.source;
  atomic.insert(atomic.find("    tl.store("), "    tl.atomic_add(out_ptr0 + x0, 1.0, xmask)\n");
  EXPECT_TRUE(agents::rewrites::x_order(atomic, k.name, &why).empty());
  EXPECT_NE(why.find("atomics"), std::string::npos) << why;
  // One digit only: nothing to reorder (the softmax's rows are numbered plainly).
  auto sm = corpus("softmax_large");
  const ir::Kernel& ks = sm->graphs[0]->kernels.at(0);
  why.clear();
  EXPECT_TRUE(agents::rewrites::x_order(ks.source, ks.name, &why).empty());
  EXPECT_NE(why.find("single digit"), std::string::npos) << why;
  // A pointwise kernel's x is its output order: the coder does not offer the rewrite.
  auto pw = corpus("group_norm");
  agents::KernelProfile p;
  p.kernel = &pw->graphs[0]->kernels.at(1);
  ASSERT_EQ(p.kernel->kind, "pointwise");
  why.clear();
  for (const auto& c : agents::rewrites::candidates(p, &why)) EXPECT_FALSE(c.description.starts_with("x order"));
  EXPECT_NE(why.find("x order: not a reduction kernel"), std::string::npos) << why;
}

TEST(Rewrites, TheTunerPipelinesTheLoopsOfAnAcceptedLaunchConfig) {
  // A launch config of the kernel's own source accepted: besides its config steps, the tuner offers its
  // loading loops pipelined (loop stages 2 and 3) at that same config, pinned, to be stepped from in turn.
  auto b = corpus("mean_dim0");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  json inductor = {{"XBLOCK", 8}, {"R0_BLOCK", 64}, {"num_warps", 4}, {"num_stages", 1}};
  json best = {{"XBLOCK", 32}, {"R0_BLOCK", 16}, {"num_warps", 4}, {"num_stages", 1}};
  p.launches = {{{"args", {tensor({256, 256}), tensor({512}), value(512), value(128)}}, {"config", inductor}}};
  auto accepted = agents::config_candidates(p, {best}, "config");
  ASSERT_EQ(accepted.size(), 1u);
  accepted[0].id = "c7";
  std::vector<agents::Candidate> near = agents::BuiltinTuner().neighbours(p, accepted[0], {});
  std::vector<const agents::Candidate*> piped;
  for (const auto& c : near)
    if (c.description.starts_with("loop stages:")) piped.push_back(&c);
  ASSERT_EQ(piped.size(), 2u);
  for (const auto* c : piped) {
    EXPECT_EQ(c->config, best);
    EXPECT_TRUE(c->own_config_space);
    EXPECT_EQ(c->parent, "c7");
    EXPECT_TRUE(c->description.ends_with(" @ XBLOCK=32 R0_BLOCK=16 num_warps=4 num_stages=1")) << c->description;
    const std::string stages = c->description.find("over 2 stages") != std::string::npos ? "2" : "3";
    EXPECT_NE(c->source.find("num_stages=" + stages + ")"), std::string::npos) << c->source;
    EXPECT_EQ(count(c->source, "triton_heuristics.fixed_config("), 1u);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c->source).passed) << c->description;
  }
  // Tried already (by source hash): not offered again.
  std::vector<std::string> tried;
  for (const auto* c : piped) tried.push_back(verify::source_hash(c->source));
  for (const auto& c : agents::BuiltinTuner().neighbours(p, accepted[0], tried))
    EXPECT_FALSE(c.description.starts_with("loop stages:")) << c.description;
  // From a pipelined candidate the steps re-pin it; no second pipelining on top.
  for (const auto& c : agents::BuiltinTuner().neighbours(p, *piped[0], {}))
    EXPECT_EQ(count(c.source, "num_stages=2)") + count(c.source, "num_stages=3)"), 1u) << c.source;
}

TEST(Rewrites, KeepTheBaselinesChosenConfigAndTheTunerStepsFromIt) {
  // The worker reports the config Inductor's autotuner settled on (launch record `config`): the
  // rewrites that keep the kernel's blocks run pinned to it, so a rewrite is compared with the
  // baseline under the same reduction layout and the stitched module runs what the gates verified.
  auto b = corpus("mean_dim0");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  json chosen = {{"XBLOCK", 8}, {"R0_BLOCK", 64}, {"num_warps", 4}, {"num_stages", 1}};
  p.launches = {{{"args", {tensor({256, 256}), tensor({512}), value(512), value(128)}}, {"config", chosen}}};
  std::string why;
  auto cands = agents::rewrites::candidates(p, &why);
  const agents::Candidate* xo = nullptr;
  for (const auto& c : cands)
    if (c.description.starts_with("x order")) xo = &c;
  ASSERT_NE(xo, nullptr) << why;
  EXPECT_EQ(xo->description, "x order: the digit of stride 256 (2 values) fastest @ XBLOCK=8 R0_BLOCK=64 num_warps=4 num_stages=1");
  EXPECT_EQ(xo->config, chosen);
  EXPECT_TRUE(xo->own_config_space);
  EXPECT_NE(xo->source.find("triton_heuristics.fixed_config(\n    config={'XBLOCK': 8, 'R0_BLOCK': 64, 'num_warps': 4, "
                            "'num_stages': 1}"), std::string::npos) << xo->source;
  EXPECT_NE(xo->source.find("xindex = (xlin % 2) * 256 + (xlin // 2)"), std::string::npos);
  EXPECT_TRUE(verify::run_g1(*p.kernel, xo->source).passed);
  // The tuner's neighbours re-pin the rewrite itself (the x order stays), never the original kernel.
  std::vector<agents::Candidate> near = agents::BuiltinTuner().neighbours(p, *xo, {});
  ASSERT_FALSE(near.empty());
  for (const auto& c : near) {
    EXPECT_NE(c.source.find("xindex = (xlin % 2) * 256 + (xlin // 2)"), std::string::npos) << c.description;
    EXPECT_EQ(count(c.source, "triton_heuristics.fixed_config("), 1u);
    EXPECT_TRUE(c.description.starts_with("x order: the digit of stride 256 (2 values) fastest @ ")) << c.description;
    EXPECT_NE(c.config, chosen);
    EXPECT_TRUE(c.own_config_space);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // Without a reported config (the CPU: no autotuner) the rewrite keeps the kernel's own decorator.
  p.launches.front().erase("config");
  for (const auto& c : agents::rewrites::candidates(p, &why)) {
    if (!c.description.starts_with("x order")) continue;
    EXPECT_TRUE(c.config.is_null());
    EXPECT_FALSE(c.own_config_space);
    EXPECT_EQ(c.source.find("fixed_config"), std::string::npos);
  }
}

TEST(Rewrites, TransposedTileHandsEachProgramATileOfTwoDigits) {
  // A group norm + SiLU over an NCHW tensor stored channels-last, in Inductor's 1-D form: the load
  // runs along x1 (the second digit), the store along x0. Each candidate tiles (x0, x1) with both
  // digits as aranges on their own axes, pinned to XBLOCK = the tile's size.
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "tests/python/data/group_norm_silu_nchw_to_nhwc_inductor_form").string());
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  std::string why;
  auto tiles = agents::rewrites::transposed_tile(p, &why);
  ASSERT_EQ(tiles.size(), 6u) << why;
  const agents::Candidate& c = tiles.front();
  EXPECT_EQ(c.description, "transposed tile: 32 of the digit of stride 1 by 32 of the digit of stride 128 per program "
                           "@ XBLOCK=1024 num_warps=4 num_stages=1");
  EXPECT_EQ(c.config, json({{"XBLOCK", 1024}, {"num_warps", 4}, {"num_stages", 1}}));
  EXPECT_FALSE(c.own_config_space);  // XBLOCK is the tile: the tuner must not re-pin it
  for (const char* line : {"    xa = (xtile % 4) * 32 + tl.arange(0, 32)[None, :]\n",
                           "    xb = ((xtile // 4) % 2) * 32 + tl.arange(0, 32)[:, None]\n",
                           "    xrest = xtile // 8\n", "    xindex = xzero + xa + 128 * xb + 8192 * xrest\n",
                           "    xmask = tl.full([32, 32], True, tl.int1)\n", "    x0 = xzero + xa\n",
                           "    x1 = xzero + xb\n", "    x2 = xzero + xrest\n",
                           "    x3 = xzero + xa + 128 * xb + 8192 * xrest\n"})
    EXPECT_NE(c.source.find(line), std::string::npos) << line << c.source;
  EXPECT_NE(c.source.find("config={'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1}"), std::string::npos);
  for (const auto& t : tiles) EXPECT_TRUE(verify::run_g1(*p.kernel, t.source).passed) << t.description;
  // The coder offers them first among the rewrites of a pointwise kernel.
  auto all = agents::rewrites::candidates(p, &why);
  ASSERT_FALSE(all.empty());
  EXPECT_TRUE(all.front().description.starts_with("transposed tile: ")) << all.front().description;

  // Declines, each with its reason: an access pattern the output order already serves, a kernel
  // tiled already, and a reduction.
  auto gelu = corpus("gelu_scale");
  p.kernel = &gelu->graphs[0]->kernels.at(0);
  why.clear();
  EXPECT_TRUE(agents::rewrites::transposed_tile(p, &why).empty());
  EXPECT_TRUE(why.starts_with("transposed tile: ")) << why;
  std::string tiled = b->graphs[0]->kernels.at(0).source;
  tiled.replace(tiled.find("    x3 = xindex\n"), 16, "    x3 = xindex\n    y0 = YBLOCK\n");
  ir::Kernel tk = b->graphs[0]->kernels.at(0);
  tk.source = tiled;
  p.kernel = &tk;
  why.clear();
  EXPECT_TRUE(agents::rewrites::transposed_tile(p, &why).empty());
  EXPECT_NE(why.find("tiled already"), std::string::npos) << why;
  std::string beyond = b->graphs[0]->kernels.at(0).source;
  beyond.replace(beyond.find("    tmp2 = tmp0 - tmp1\n"), 23, "    tmp2 = tmp0 - tmp1 + xindex\n");
  tk.source = beyond;
  why.clear();
  EXPECT_TRUE(agents::rewrites::transposed_tile(p, &why).empty());
  EXPECT_NE(why.find("xindex is used other than through its digit variables"), std::string::npos) << why;
  // corpus group_norm's normalize step reads its per-channel weight along x1 (the second digit) alone:
  // broadcast over the first digit, not a transposed read.
  auto gn = corpus("group_norm");
  p.kernel = &gn->graphs[0]->kernels.at(1);
  ASSERT_EQ(p.kernel->kind, "pointwise");
  why.clear();
  EXPECT_TRUE(agents::rewrites::transposed_tile(p, &why).empty());
  EXPECT_NE(why.find("no load or store runs along the digit of stride 256 across the fastest one"), std::string::npos)
      << why;
  auto md = corpus("mean_dim0");
  p.kernel = &md->graphs[0]->kernels.at(0);
  why.clear();
  EXPECT_TRUE(agents::rewrites::transposed_tile(p, &why).empty());
  EXPECT_NE(why.find("not a pointwise kernel"), std::string::npos) << why;
}

TEST(Rewrites, ProvenMasksDropTheBoundsChecksTrueForEveryElement) {
  // corpus max_pool1d_dilated: kernel 4, stride 2, padding 2, dilation 2 over 203 values, 101 outputs
  // (x0 in [0, 100]). The taps 2*x0 (<= 200) and 2 + 2*x0 (<= 202) are inside [0, 203) for every
  // output; -2 + 2*x0 (x0 = 0) and 4 + 2*x0 (x0 = 100) are not, and keep their checks.
  auto b = corpus("max_pool1d_dilated");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto pm = agents::rewrites::proven_masks(k.source, k.name, &why);
  ASSERT_TRUE(pm) << why;
  EXPECT_EQ(pm->dropped, 2);
  EXPECT_EQ(pm->loads, 2);
  for (const char* kept : {"tl.load(in_ptr0 + ((-2) + 2*x0 + 203*x1), tmp10 & xmask,",
                           "tl.load(in_ptr0 + (2*x0 + 203*x1), xmask,", "tl.load(in_ptr0 + (2 + 2*x0 + 203*x1), xmask,",
                           "tl.load(in_ptr0 + (4 + 2*x0 + 203*x1), tmp30 & xmask,"})
    EXPECT_NE(pm->source.find(kept), std::string::npos) << kept << pm->source;
  EXPECT_TRUE(verify::run_g1(k, pm->source).passed);
  agents::KernelProfile p;
  p.kernel = &k;
  auto all = agents::rewrites::candidates(p, &why);
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const agents::Candidate& c) {
    return c.description == "proven masks: 2 bounds check(s) on 2 load(s) dropped (true for every element)";
  }));

  auto with = [&](std::string from, std::string to) {
    std::string s = k.source;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  // An input one shorter: 2 + 2*x0 reaches 202, no longer below 202; only 2*x0's check goes.
  auto shorter = agents::rewrites::proven_masks(
      with("tmp7 = tl.full([1], 203, tl.int64)", "tmp7 = tl.full([1], 202, tl.int64)"), k.name, &why);
  ASSERT_TRUE(shorter);
  EXPECT_EQ(shorter->dropped, 1);
  EXPECT_NE(shorter->source.find("tl.load(in_ptr0 + (2 + 2*x0 + 203*x1), tmp23 & xmask,"), std::string::npos);
  // A name bound twice is not one value; a mask without xmask in a masked kernel holds for lanes
  // past xnumel too; an inline comparison kept beside a dropped term keeps its parentheses.
  auto twice = agents::rewrites::proven_masks(with("    tmp16 = tmp4 & tmp15\n",
                                                   "    tmp16 = tmp4 & tmp15\n    tmp16 = tmp4 & tmp15\n"),
                                              k.name, &why);
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->dropped, 1);
  auto no_xmask = agents::rewrites::proven_masks(with("tmp16 & xmask", "tmp16"), k.name, &why);
  ASSERT_TRUE(no_xmask);
  EXPECT_EQ(no_xmask->dropped, 1);
  auto inline_cmp = agents::rewrites::proven_masks(with("tmp16 & xmask", "(tmp5 >= tmp0) & tmp16 & xmask"), k.name,
                                                   &why);
  ASSERT_TRUE(inline_cmp);
  EXPECT_NE(inline_cmp->source.find("tl.load(in_ptr0 + (2*x0 + 203*x1), (tmp5 >= tmp0) & xmask,"), std::string::npos);
  // Nothing provable: declined with the reason (corpus gelu_scale masks by xmask alone).
  auto gelu = corpus("gelu_scale");
  const ir::Kernel& g = gelu->graphs[0]->kernels.at(0);
  EXPECT_FALSE(agents::rewrites::proven_masks(g.source, g.name, &why));
  EXPECT_EQ(why, "proven masks: no load mask has a term proven true for every element");
}

TEST(Rewrites, RowTilesMakeAGroupNormsPerRowValuesScalars) {
  // corpus group_norm's normalize: rows of 256 (one channel's plane), the group's statistics by
  // `x4 // 8` and the channel's weight and bias by `x1 = (xindex // 256) % 64`. Each program walks
  // tiles of one row; the per-row loads lose their vector mask (one scalar each).
  auto gn = corpus("group_norm");
  agents::KernelProfile p;
  p.kernel = &gn->graphs[0]->kernels.at(1);
  std::string why;
  auto tiles = agents::rewrites::row_tiles(p, &why);
  ASSERT_EQ(tiles.size(), 1u) << why;  // rows of 256: only XBLOCK=256 wastes no more than an eighth
  const agents::Candidate& c = tiles.front();
  EXPECT_EQ(c.description, "row tiles: programs walk tiles of one row of 256 (4 per-row load(s) once a tile) @ "
                           "XBLOCK=256 num_warps=2 num_stages=1");
  EXPECT_TRUE(c.own_config_space);
  for (const char* line :
       {"    for xtile in tl.range(tl.program_id(0), 256 * ((256 + XBLOCK - 1) // XBLOCK), tl.num_programs(0)):\n",
        "        xindex = xrow * 256 + xinner\n", "        xmask = xinner < 256\n", "        x4 = xrow\n",
        "        x1 = (xrow % 64)\n", "        tmp1 = tl.load(in_ptr1 + (x4 // 8), None, eviction_policy='evict_last')\n",
        "        tmp0 = tl.load(in_ptr0 + (x3), xmask)\n"})
    EXPECT_NE(c.source.find(line), std::string::npos) << line << c.source;
  EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed);
  // Declines: one digit (no rows), a reduction, rows that do not divide xnumel.
  auto gelu = corpus("gelu_scale");
  p.kernel = &gelu->graphs[0]->kernels.at(0);
  EXPECT_TRUE(agents::rewrites::row_tiles(p, &why).empty());
  EXPECT_EQ(why, "row tiles: the x index has a single digit: no rows");
  p.kernel = &gn->graphs[0]->kernels.at(0);
  EXPECT_TRUE(agents::rewrites::row_tiles(p, &why).empty());
  EXPECT_EQ(why, "row tiles: not a pointwise kernel");
  ir::Kernel odd = gn->graphs[0]->kernels.at(1);
  odd.source.replace(odd.source.find("xnumel = 65536"), 14, "xnumel = 65500");
  p.kernel = &odd;
  EXPECT_TRUE(agents::rewrites::row_tiles(p, &why).empty());
  EXPECT_EQ(why, "row tiles: rows of 256 do not divide xnumel 65500");
}

TEST(Rewrites, MaskedModuloGoesOnlyWhereTheMaskBoundsTheIndex) {
  // A split reduction's chunk in Inductor's form: the last chunk overshoots 517517, its lanes masked by tmp2.
  const std::string kernel = R"(import triton
import triton.language as tl

@triton.jit
def k(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 8
    r0_numel = 64690
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex
    _tmp5 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        r0_1 = r0_index
        tmp0 = (r0_1 + 64690*x0).to(tl.int32)
        tmp1 = tl.full([1, 1], 517517, tl.int32)
        tmp2 = tmp0 < tmp1
        tmp3 = tl.load(in_ptr0 + (((r0_1 + 64690*x0) % 517517)), r0_mask & tmp2 & xmask, other=0.0)
        tmp4 = tl.load(in_ptr1 + (((r0_1 + 64690*x0) % 517517)), r0_mask & xmask, other=0.0)
        _tmp5 = _tmp5 + tmp3 + tmp4
    tmp5 = tl.sum(_tmp5, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp5, xmask)
)";
  std::string why;
  auto mm = agents::rewrites::masked_modulo(kernel, "k", &why);
  ASSERT_TRUE(mm) << why;
  EXPECT_EQ(mm->dropped, 1);  // in_ptr1's mask does not bound its index: its modulo stays
  EXPECT_NE(mm->source.find("tl.load(in_ptr0 + (((r0_1 + 64690*x0))), r0_mask & tmp2 & xmask"), std::string::npos);
  EXPECT_NE(mm->source.find("tl.load(in_ptr1 + (((r0_1 + 64690*x0) % 517517)), r0_mask & xmask"), std::string::npos);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = kernel;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Another bound, another compared index, the comparison bound twice: nothing proves the index below the modulus.
  for (const std::string& src : {with("tl.full([1, 1], 517517, tl.int32)", "tl.full([1, 1], 517518, tl.int32)"),
                                 with("tmp0 = (r0_1 + 64690*x0).to(tl.int32)", "tmp0 = (r0_1 + 64691*x0).to(tl.int32)"),
                                 with("        tmp2 = tmp0 < tmp1\n",
                                      "        tmp2 = tmp0 < tmp1\n        tmp2 = tmp0 < tmp1\n"),
                                 with("tmp2 = tmp0 < tmp1", "tmp2 = tmp0 <= tmp1")}) {
    EXPECT_FALSE(agents::rewrites::masked_modulo(src, "k", &why)) << src;
    EXPECT_EQ(why, "masked modulo: no load index is a modulo that its mask bounds");
  }
}

TEST(Rewrites, WelfordChunksReplaceThePerElementUpdate) {
  // Every looped Welford statistics kernel of the corpus: the update becomes per-chunk statistics merged by
  // welford_combine, the accumulators one value a row, the lanes' welford after the loop kept; G1 passes.
  for (const char* name : {"group_norm", "layer_norm_3d", "layer_norm_large"}) {
    SCOPED_TRACE(name);
    auto b = corpus(name);
    const ir::Kernel* k = nullptr;
    for (const ir::Kernel& c : b->graphs[0]->kernels)
      if (c.source.find("welford_reduce(") != std::string::npos) k = &c;
    ASSERT_NE(k, nullptr);
    std::string why;
    auto wc = agents::rewrites::welford_chunks(k->source, k->name, &why);
    ASSERT_TRUE(wc) << why;
    EXPECT_EQ(wc->accumulators, 1);
    EXPECT_EQ(wc->source.find("welford_reduce("), std::string::npos);
    EXPECT_EQ(count(wc->source, "triton_helpers.welford_combine("), 1u);
    EXPECT_EQ(count(wc->source, "tl.zeros([XBLOCK, 1], tl.float32)"), 3u);
    EXPECT_NE(wc->source.find("triton_helpers.welford("), std::string::npos);
    EXPECT_TRUE(verify::run_g1(*k, wc->source).passed);
  }
  {
    // Inductor's split form (a row's statistics over several programs, the last partial): each element folded in
    // as its own masked triple by welford_combine. The per-element combine goes; one merge a chunk stays.
    SCOPED_TRACE("layer_norm3_split_cpu_capture");
    auto b = ir::load_bundle(
        (std::filesystem::path(KOPT_SOURCE_DIR) / "tests/python/data/layer_norm3_split_cpu_capture").string());
    const ir::Kernel* k = b->graphs.at(0)->find_kernel("triton_red_fused_native_layer_norm_0");
    ASSERT_NE(k, nullptr);
    ASSERT_EQ(count(k->source, "triton_helpers.welford_combine("), 1u);
    std::string why;
    auto wc = agents::rewrites::welford_chunks(k->source, k->name, &why);
    ASSERT_TRUE(wc) << why;
    EXPECT_EQ(wc->accumulators, 1);
    EXPECT_EQ(count(wc->source, "triton_helpers.welford_combine("), 1u);
    EXPECT_EQ(wc->source.find("_mean_next"), std::string::npos);
    EXPECT_NE(wc->source.find("tmp16_cm2 = tl.sum(tl.where(r0_mask & xmask, tmp14, 0.0)"), std::string::npos);
    EXPECT_EQ(count(wc->source, "tl.zeros([XBLOCK, 1], tl.float32)"), 3u);
    EXPECT_TRUE(verify::run_g1(*k, wc->source).passed);
  }
  // Declined: no Welford update; an accumulator read besides it (a lane's running mean stored).
  auto sm = corpus("softmax_large");
  std::string why;
  EXPECT_FALSE(agents::rewrites::welford_chunks(sm->graphs[0]->kernels.at(0).source, "k", &why));
  EXPECT_NE(why.find("no looped"), std::string::npos) << why;
  auto gn = corpus("group_norm");
  std::string src = kopt::testing::replaced(gn->graphs[0]->kernels.at(0).source, "    tmp3, tmp4, tmp5 =",
                                            "    tmp99 = tmp2_mean * 2.0\n    tmp3, tmp4, tmp5 =");
  EXPECT_FALSE(agents::rewrites::welford_chunks(src, "k", &why));
  EXPECT_NE(why.find("used besides the update"), std::string::npos) << why;
}

TEST(Rewrites, SoftmaxChunksKeepOneMaxARowAndOneExpAnElement) {
  // Inductor's looped online softmax (the corpus's long rows, a softmax over the columns of a row-major tensor):
  // the per-element combine becomes the chunk's max, one rescale of the lanes' sums a chunk and one exp an
  // element; the max one value a row; the reduce after the loop kept; G1 passes.
  for (const char* name : {"corpus/softmax_large", "tests/python/data/softmax_columns_inductor_form"}) {
    SCOPED_TRACE(name);
    auto b = ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / name).string());
    const ir::Kernel* k = nullptr;
    for (const ir::Kernel& c : b->graphs[0]->kernels)
      if (c.source.find("online_softmax_combine(") != std::string::npos) k = &c;
    ASSERT_NE(k, nullptr);
    std::string why;
    auto sc = agents::rewrites::softmax_chunks(k->source, &why);
    ASSERT_TRUE(sc) << why;
    EXPECT_EQ(sc->accumulators, 1);
    EXPECT_EQ(sc->source.find("online_softmax_combine("), std::string::npos);
    EXPECT_EQ(sc->source.find("_max_next"), std::string::npos);
    EXPECT_EQ(count(sc->source, "tl.full([XBLOCK, 1], float('-inf'), tl.float32)"), 1u);
    EXPECT_EQ(count(sc->source, "tl.zeros([XBLOCK, R0_BLOCK], tl.float32)"), 1u);
    EXPECT_EQ(count(sc->source, "tl.math.exp2("), 2u);  // the chunk's rescale and the element's own
    EXPECT_EQ(count(sc->source, "triton_helpers.online_softmax_reduce("), 1u);
    EXPECT_TRUE(verify::run_g1(*k, sc->source).passed);
  }
  // One line, as the split writes it (no blank lines, the call's arguments on its line).
  auto b = corpus("softmax_large");
  std::string src = b->graphs[0]->kernels.at(0).source;
  size_t at = src.find("online_softmax_combine(");
  ASSERT_NE(at, std::string::npos);
  size_t close = src.find(')', at);
  std::string call = src.substr(at, close + 1 - at), flat;
  for (char c : call)
    if (c != '\n' && !(c == ' ' && !flat.empty() && (flat.back() == ' ' || flat.back() == '('))) flat += c;
  std::string one = kopt::testing::replaced(src, call, flat);
  std::string why;
  auto sc = agents::rewrites::softmax_chunks(one, &why);
  ASSERT_TRUE(sc) << why << "\n" << flat;
  EXPECT_EQ(sc->source.find("online_softmax_combine("), std::string::npos);
  // Declined: no online softmax; the lanes' max read besides the update and its reduce.
  EXPECT_FALSE(agents::rewrites::softmax_chunks(corpus("group_norm")->graphs[0]->kernels.at(0).source, &why));
  EXPECT_NE(why.find("no looped"), std::string::npos) << why;
  std::string reads = kopt::testing::replaced(src, "    tmp2, tmp3 = triton_helpers.online_softmax_reduce(",
                                              "    tmp99 = tl.sum(_tmp2_max, 1)\n    tmp2, tmp3 = triton_helpers.online_softmax_reduce(");
  EXPECT_FALSE(agents::rewrites::softmax_chunks(reads, &why));
  EXPECT_NE(why.find("used besides"), std::string::npos) << why;
}

TEST(Rewrites, SoftplusWritesLog1pOfExpAsTwoApproximations) {
  // A binary cross entropy with logits captured on the CPU (log1p(exp(-|x|)) per element) and the logcumsumexp
  // scan's combine (log1p(exp(min - max)), in the kernel and its helper): each pair rewritten, G1 passes.
  for (auto [name, pairs] : {std::pair{"tests/python/data/bce_with_logits_cpu_capture", 1},
                             std::pair{"tests/python/data/logcumsumexp_rows_inductor_form", 3}}) {
    SCOPED_TRACE(name);
    auto b = ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / name).string());
    const ir::Kernel& k = b->graphs[0]->kernels.at(0);
    std::string why;
    auto sp = agents::rewrites::softplus(k.source, &why);
    ASSERT_TRUE(sp) << why;
    EXPECT_EQ(sp->rewritten, pairs);
    EXPECT_EQ(sp->source.find("libdevice.log1p("), std::string::npos);
    EXPECT_EQ(count(sp->source, "tl.math.log2(1.0 + "), static_cast<size_t>(pairs));
    EXPECT_TRUE(verify::run_g1(k, sp->source).passed);
  }
  // Declined: an exp read besides its log1p; a float64 kernel.
  auto b = ir::load_bundle(
      (std::filesystem::path(KOPT_SOURCE_DIR) / "tests/python/data/bce_with_logits_cpu_capture").string());
  const std::string& src = b->graphs[0]->kernels.at(0).source;
  size_t at = src.find(" = libdevice.log1p(");
  ASSERT_NE(at, std::string::npos);
  size_t open = at + std::string(" = libdevice.log1p(").size();
  std::string t = src.substr(open, src.find(')', open) - open);
  std::string twice = kopt::testing::replaced(src, " = libdevice.log1p(" + t + ")",
                                              " = libdevice.log1p(" + t + ") + " + t);
  std::string why;
  EXPECT_FALSE(agents::rewrites::softplus(twice, &why));
  EXPECT_NE(why.find("read by nothing else"), std::string::npos) << why;
  EXPECT_FALSE(agents::rewrites::softplus(src + "\n    tmp99 = tmp0.to(tl.float64)\n", &why));
  EXPECT_NE(why.find("float64"), std::string::npos) << why;
}

TEST(Rewrites, TailMaskRunsEveryBlockButTheLastUnmasked) {
  // corpus max_pool3d_dilated's pool: 1260 outputs, not a multiple of 16, so Inductor's mask differs lane by lane.
  auto pool = corpus("max_pool3d_dilated");
  const ir::Kernel& k = pool->graphs[0]->kernels.at(0);
  std::string why;
  auto s = agents::rewrites::tail_mask(k, &why);
  ASSERT_TRUE(s) << why;
  for (const char* line : {"    if xoffset + XBLOCK <= xnumel:\n        xmask = tl.full([XBLOCK], True, tl.int1)[:]\n",
                           "    else:\n        xmask = xindex < xnumel\n"})
    EXPECT_NE(s->find(line), std::string::npos) << line << *s;
  // The body twice, each statement as written: the original's stores once under each branch.
  size_t stores = 0;
  for (size_t at = s->find("tl.store("); at != std::string::npos; at = s->find("tl.store(", at + 1)) ++stores;
  size_t original = 0;
  for (size_t at = k.source.find("tl.store("); at != std::string::npos; at = k.source.find("tl.store(", at + 1))
    ++original;
  EXPECT_EQ(stores, 2 * original);
  EXPECT_TRUE(verify::run_g1(k, *s).passed);
  // Declines: a multiple of 16 (vectors already), a reduction.
  ir::Kernel even = k;
  even.source.replace(even.source.find("xnumel = 1260"), 13, "xnumel = 1264");
  EXPECT_FALSE(agents::rewrites::tail_mask(even, &why));
  EXPECT_EQ(why, "tail mask: xnumel 1264 is a multiple of 16: its accesses are vectors already");
  auto gn = corpus("group_norm");
  const ir::Kernel& red = gn->graphs[0]->kernels.at(0);
  EXPECT_FALSE(agents::rewrites::tail_mask(red, &why));
  EXPECT_EQ(why, "tail mask: not a pointwise kernel");
}
