// The built-in agents' pure parts on real corpus kernels: config pinning keeps the
// metas byte for byte and passes G1; the config space only holds safe configs; the
// roofline counts compulsory bytes; families; the row-softmax template applies to
// plain softmax kernels and declines fused ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "agents/agent.h"
#include "agents/coder/config_space.h"
#include "artifact/pin_config.h"
#include "search/search.h"
#include "agents/coder/templates/templates.h"
#include "agents/planner/builtin.h"
#include "agents/profiler/builtin.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "profile/roofline.h"
#include "verify/static/g1.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace kopt;
using nlohmann::json;

namespace {

using kopt::testing::corpus;
using kopt::testing::tensor;
using kopt::testing::value;

// softmax_large: in_ptr0 [8192, 8192] -> out_ptr2, xnumel = r0_numel = 8192.
json softmax_launch() {
  return {{"args", {tensor({8192, 8192}), tensor({8192, 8192}), value(8192), value(8192)}}};
}

}  // namespace

TEST(PinConfig, KeepsMetasAndPassesG1) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  json c = {{"XBLOCK", 2}, {"R0_BLOCK", 2048}, {"num_warps", 8}, {"num_stages", 1}};
  std::string pinned = ir::pin_config(k.source, k.name, c);
  EXPECT_NE(pinned.find("triton_heuristics.fixed_config(\n    config={'XBLOCK': 2, 'R0_BLOCK': 2048, 'num_warps': 8, "
                        "'num_stages': 1}"),
            std::string::npos);
  EXPECT_EQ(pinned.find("triton_heuristics.reduction("), std::string::npos);
  // triton_meta and inductor_meta are carried over as written.
  size_t tm = k.source.find("triton_meta=");
  std::string meta_line = k.source.substr(tm, k.source.find('\n', tm) - tm);
  EXPECT_NE(pinned.find(meta_line), std::string::npos);
  EXPECT_TRUE(verify::run_g1(k, pinned).passed);
  EXPECT_EQ(ir::describe_config(c), "XBLOCK=2 R0_BLOCK=2048 num_warps=8 num_stages=1");
}

TEST(ConfigSpace, OnlySafeConfigs) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string why;
  auto shape = agents::kernel_shape(k, softmax_launch(), &why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->numel.at("X"), 8192);
  EXPECT_EQ(shape->numel.at("R0"), 8192);
  EXPECT_FALSE(shape->masked.at("X"));  // softmax_large's x dimension is unmasked (xmask = tl.full(..., True))
  auto space = agents::config_space(*shape);
  ASSERT_GT(space.size(), 10u);
  for (const json& c : space) {
    EXPECT_TRUE(agents::config_is_safe(*shape, c)) << c.dump();
    EXPECT_LE(c["XBLOCK"].get<int64_t>(), 4096);
    EXPECT_EQ(8192 % c["XBLOCK"].get<int64_t>(), 0);
  }
  EXPECT_FALSE(agents::config_is_safe(*shape, {{"XBLOCK", 3}, {"R0_BLOCK", 1024}, {"num_warps", 4}}));
  EXPECT_FALSE(agents::config_is_safe(*shape, {{"XBLOCK", 8192}, {"R0_BLOCK", 1}, {"num_warps", 4}}));
  for (const json& n : agents::config_neighbours(*shape, space.front())) EXPECT_TRUE(agents::config_is_safe(*shape, n));
}

TEST(ConfigSpace, StagesVaryOnlyWhereTheLaunchsCountIsUsed) {
  // A looped reduction without tl.dot: Triton pipelines its loops only on their own counts, so the
  // launch's num_stages stays 1 and the tuner does not step it.
  auto b = corpus("softmax_large");
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  auto shape = agents::kernel_shape(k, softmax_launch(), nullptr);
  ASSERT_TRUE(shape);
  EXPECT_FALSE(shape->launch_stages_matter);
  auto space = agents::config_space(*shape);
  ASSERT_FALSE(space.empty());
  for (const json& c : space) EXPECT_EQ(c["num_stages"], 1) << c.dump();
  for (const json& n : agents::config_neighbours(*shape, space.front()))
    EXPECT_EQ(n["num_stages"], space.front()["num_stages"]) << n.dump();
  // A loop feeding tl.dot: the launch's count pipelines it, so stages are searched and stepped.
  k.source.insert(k.source.find("        tl.store("), "        acc = tl.dot(tmp0, tmp0)\n");
  shape = agents::kernel_shape(k, softmax_launch(), nullptr);
  ASSERT_TRUE(shape);
  EXPECT_TRUE(shape->launch_stages_matter);
  space = agents::config_space(*shape);
  EXPECT_TRUE(std::any_of(space.begin(), space.end(), [](const json& c) { return c["num_stages"] == 2; }));
  auto steps = agents::config_neighbours(*shape, space.front());
  EXPECT_TRUE(std::any_of(steps.begin(), steps.end(),
                          [&](const json& n) { return n["num_stages"] != space.front()["num_stages"]; }));
}

TEST(ConfigSpace, UnmaskedDimensionNeedsDivisors) {
  // gelu_scale's kernel has no xmask: xnumel = 65536 allows only power-of-two blocks <= 4096.
  auto b = corpus("gelu_scale");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  json launch = {{"args", {tensor({256, 256}), tensor({256}), tensor({256, 256}), value(65536)}}};
  auto shape = agents::kernel_shape(k, launch, nullptr);
  ASSERT_TRUE(shape);
  for (const json& c : agents::config_space(*shape)) EXPECT_EQ(65536 % c["XBLOCK"].get<int64_t>(), 0);
}

TEST(ConfigSpace, SplitScansKeepBlocksTheWorkspaceHolds) {
  // cumsum_long_large: 4 x 2M; the host's workspace has one slot per 256-element block.
  auto b = corpus("cumsum_long_large");
  json launch = {{"args", {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                           value(2097152)}}};
  std::string why;
  auto shape = agents::kernel_shape(b->graphs[0]->kernels.at(0), launch, &why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->min_r0_block, 256);
  auto space = agents::config_space(*shape);
  ASSERT_FALSE(space.empty());
  for (const json& c : space) EXPECT_GE(c["R0_BLOCK"].get<int64_t>(), 256);
  EXPECT_FALSE(agents::config_is_safe(*shape, {{"R0_BLOCK", 128}, {"num_warps", 2}, {"num_stages", 1}}));
}

TEST(ConfigSpace, OuterReductionsRankSectorFillingXBlocksFirst) {
  // A column reduction (16384 rows x 4096 columns, x contiguous): XBLOCK=1 reads 4 bytes of each
  // 32-byte sector. Those configs stay in the space but rank behind sector-filling ones.
  agents::KernelShape s;
  s.kind = "reduction", s.blocks = {"XBLOCK", "R0_BLOCK"}, s.numel = {{"X", 4096}, {"R0", 16384}};
  s.masked = {{"X", true}, {"R0", true}};
  s.reduction_hint = "OUTER";
  auto outer = agents::config_space(s);
  ASSERT_GE(outer.size(), 20u);
  for (size_t i = 0; i < 10; ++i) EXPECT_GE(outer[i]["XBLOCK"].get<int64_t>() * 4, 32) << outer[i].dump();
  bool narrow_kept = false;
  for (const json& c : outer) narrow_kept = narrow_kept || c["XBLOCK"].get<int64_t>() < 8;
  EXPECT_TRUE(narrow_kept);
  s.elem_bytes = 2;  // bf16: the same XBLOCK fills half as much of a sector, and is penalized for it
  auto bf16 = agents::config_space(s);
  ASSERT_GE(bf16.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_GE(bf16[i]["XBLOCK"].get<int64_t>() * 2, 16) << bf16[i].dump();
  s.elem_bytes = 4, s.reduction_hint = "INNER";  // rows contiguous: XBLOCK is not a sector question
  auto inner = agents::config_space(s);
  EXPECT_NE(inner.front().dump(), outer.front().dump());
}

TEST(ConfigSpace, UserKernelsVaryOnlyLaunchOptions) {
  // A kernel file's autotuned matmul (docs/inputs.md): its block sizes fixed the launcher's grid, so
  // the space keeps them and varies num_warps / num_stages; pinned candidates keep the metas and pass G1.
  auto b = corpus("triton/matmul_bias_relu");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  EXPECT_EQ(k.kind, "user_autotune");
  std::string why;
  auto shape = agents::kernel_shape(k, json::object(), &why);
  ASSERT_TRUE(shape) << why;
  EXPECT_EQ(shape->base_config["BLOCK_M"], 32);
  auto space = agents::config_space(*shape);
  ASSERT_EQ(space.size(), 19u);  // 5 warps x 4 stages, less the captured (4, 2)
  for (const json& c : space) {
    EXPECT_EQ(c["BLOCK_M"], 32);
    EXPECT_EQ(c["BLOCK_N"], 32);
    EXPECT_EQ(c["BLOCK_K"], 32);
    EXPECT_FALSE(c["num_warps"] == 4 && c["num_stages"] == 2) << c.dump();
  }
  EXPECT_EQ(space.front().value("num_warps", 0) == 4 || space.front().value("num_stages", 0) == 2, true);
  json other_block = space.front();
  other_block["BLOCK_M"] = 64;
  EXPECT_FALSE(agents::config_is_safe(*shape, other_block));
  json extra = space.front();
  extra["GROUP"] = 8;
  EXPECT_FALSE(agents::config_is_safe(*shape, extra));
  std::string pinned = ir::pin_config(k.source, k.name, space.front());
  EXPECT_NE(pinned.find("'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2']"), std::string::npos);
  EXPECT_TRUE(verify::run_g1(k, pinned).passed);
}

TEST(Roofline, CompulsoryBytes) {
  auto b = corpus("softmax_large");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  profile::Cost c = profile::launch_cost(k, softmax_launch());
  EXPECT_EQ(c.bytes_read, 8192ull * 8192 * 4);
  EXPECT_EQ(c.bytes_written, 8192ull * 8192 * 4);
  auto floor = profile::floor_ms(c, {{"copy_bytes_per_s", 4e12}});
  ASSERT_TRUE(floor);
  EXPECT_NEAR(*floor, 2.0 * 8192 * 8192 * 4 / 4e12 * 1e3, 1e-9);
  // A broadcast (stride 0) view counts its span, not its element count.
  EXPECT_EQ(profile::tensor_bytes({{"shape", {1024, 1024}}, {"stride", {0, 1}}, {"dtype", "float32"}}), 4096u);
}

TEST(Roofline, BytesFollowTheSourcesStoresNotInductorsMutatedNames) {
  // linear_gelu's epilogue updates its in_out pointer in place: read and written.
  auto b = corpus("linear_gelu");
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  ASSERT_EQ(k.mutated_args, std::vector<std::string>{"in_out_ptr0"});
  json launch = {{"args", {tensor({128, 256}), tensor({256}), value(32768)}}};
  profile::Cost c = profile::launch_cost(k, launch);
  EXPECT_EQ(c.bytes_read, 32768ull * 4 + 256 * 4);
  EXPECT_EQ(c.bytes_written, 32768ull * 4);
  // The same kernel storing its result elsewhere reads in_out_ptr0 only, whatever mutated_arg_names
  // says (level 2's depthwise BN/hardswish kernel: its result goes to another layout).
  const std::string store = "tl.store(in_out_ptr0 + (x2), tmp10, None)";
  ASSERT_NE(k.source.find(store), std::string::npos);
  k.source.replace(k.source.find(store), store.size(), "tl.store(in_ptr0 + (x2), tmp10, None)");
  profile::Cost d = profile::launch_cost(k, launch);
  EXPECT_EQ(d.bytes_written, 256ull * 4);  // in_ptr0 is now the stored one (and loaded: read and written)
  EXPECT_EQ(d.bytes_read, 32768ull * 4 + 256 * 4);
}

TEST(Family, FromAtenOps) {
  EXPECT_EQ(profile::family(corpus("softmax_large")->graphs[0]->kernels.at(0)), "softmax");
  EXPECT_EQ(profile::family(corpus("log_softmax")->graphs[0]->kernels.at(0)), "log_softmax");
  EXPECT_EQ(profile::family(corpus("layer_norm")->graphs[0]->kernels.at(0)), "layer_norm");
  EXPECT_EQ(profile::family(corpus("max_pool2d")->graphs[0]->kernels.at(0)), "pooling");
  EXPECT_EQ(profile::family(corpus("gelu_scale")->graphs[0]->kernels.at(0)), "pointwise");
}

TEST(RowSoftmaxTemplate, AppliesToPlainSoftmaxAndPassesG1) {
  auto b = corpus("softmax_large");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = "softmax";
  p.launches = {softmax_launch()};
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_EQ(c.origin, "template:softmax");
    bool chunked = c.description.starts_with("row softmax two passes");
    EXPECT_NE(c.source.find(chunked ? "CB: tl.constexpr = " : "RB: tl.constexpr = 8192"), std::string::npos);
    // float32 rows keep tl.exp and the division (the lean arithmetic is for half-precision rows)
    EXPECT_EQ(c.description.find("lean"), std::string::npos) << c.description;
    EXPECT_EQ(c.source.find("tl.math.exp2("), std::string::npos) << c.description;
    auto g1 = verify::run_g1(*p.kernel, c.source);
    EXPECT_TRUE(g1.passed) << c.description;
  }
  // The same rows in bf16: every schedule lean, exp2 for each exp and one reciprocal per row.
  p.launches = {{{"args", {tensor({8192, 8192}, "bfloat16"), tensor({8192, 8192}, "bfloat16"), value(8192), value(8192)}}}};
  auto half = agents::templates::instantiate(p, &why);
  ASSERT_EQ(half.size(), cands.size()) << why;
  for (const auto& c : half) {
    EXPECT_NE(c.description.find(", lean arithmetic"), std::string::npos) << c.description;
    EXPECT_EQ(c.source.find("tl.exp("), std::string::npos) << c.description;
    EXPECT_EQ(c.source.find("e / s"), std::string::npos) << c.description;
    EXPECT_EQ(c.source.find(") / s"), std::string::npos) << c.description;
    EXPECT_NE(c.source.find("tl.math.exp2(x * 1.4426950408889634 - "), std::string::npos) << c.description;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
}

TEST(RowSoftmaxTemplate, DeclinesWhatItDoesNotHandle) {
  auto b = corpus("softmax_large");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = "softmax";
  std::string why;
  // Rows too long for registers: only the two-pass schedule, in chunks of 4K-16K.
  p.launches = {{{"args", {tensor({16, 65536}), tensor({16, 65536}), value(16), value(65536)}}}};
  auto long_rows = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(long_rows.empty()) << why;
  // CB=32768 over 32 warps: one program per SM, for rows of 64K+ (fewer rows in flight, so each
  // stays in L2 for its second read).
  EXPECT_TRUE(std::any_of(long_rows.begin(), long_rows.end(), [](const agents::Candidate& c) {
    return c.description.starts_with("row softmax two passes, CB=32768") &&
           c.description.find("num_warps=32") != std::string::npos;
  }));
  // Rows of 48K+ also get the second pass last chunk first, and both directions with the next chunk
  // prefetched, at every chunk size.
  size_t reversed = 0, prefetched = 0;
  for (const auto& c : long_rows) {
    bool pre = c.description.find(", the next chunk prefetched, CB=") != std::string::npos;
    bool rev = c.description.starts_with("row softmax two passes (the second last chunk first), ");
    EXPECT_TRUE(rev || c.description.starts_with("row softmax two passes, ")) << c.description;
    if (pre) EXPECT_NE(c.source.find(rev ? "c = last - i" : "c = i\n"), std::string::npos) << c.description;
    else EXPECT_EQ(c.source.find("cols = (last - c0) + tl.arange(0, CB)") != std::string::npos, rev) << c.description;
    EXPECT_EQ(c.source.find("nxt = tl.load(") != std::string::npos, pre) << c.description;
    reversed += rev;
    prefetched += pre;
    EXPECT_EQ(c.source.find("RB: tl.constexpr"), std::string::npos);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  EXPECT_EQ(reversed * 2, long_rows.size());
  EXPECT_EQ(prefetched * 2, long_rows.size());
  // A transposed (non-contiguous) input.
  json t = tensor({8192, 8192});
  t["stride"] = {1, 8192};
  p.launches = {{{"args", {t, tensor({8192, 8192}), value(8192), value(8192)}}}};
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  // A kernel that fuses more than softmax (cross-entropy's loss kernel).
  auto ce = corpus("cross_entropy");
  p.kernel = &ce->graphs[0]->kernels.at(1);
  p.family = "cross_entropy";
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
}

namespace {

agents::KernelProfile pool_profile(const ir::Bundle& b, json in, json out, int64_t xnumel) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", {in, out, value(xnumel)}}}};
  return p;
}

}  // namespace

TEST(Pool2dTemplate, ReadsParametersFromTheGraphFragment) {
  // corpus max_pool2d: 3x3 stride 2 padding 1 on 4x16x32x32 -> 4x16x16x16.
  auto b = corpus("max_pool2d");
  auto p = pool_profile(*b, tensor({4, 16, 32, 32}), tensor({4, 16, 16, 16}), 4 * 16 * 16 * 16);
  ASSERT_EQ(p.family, "pooling");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_NE(c.source.find("max 3x3, stride 2, padding 1"), std::string::npos);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // avg_pool2d: 3x3 stride 1 padding 1 (count_include_pad: divide by 9).
  auto a = corpus("avg_pool2d");
  auto q = pool_profile(*a, tensor({4, 16, 32, 32}), tensor({4, 16, 32, 32}), 4 * 16 * 32 * 32);
  auto avg = agents::templates::instantiate(q, &why);
  ASSERT_FALSE(avg.empty()) << why;
  EXPECT_NE(avg.front().source.find("acc / 9.0"), std::string::npos);
}

TEST(Pool2dTemplate, StrideOneGetsRegisterWindowsThatReadOnlyTheNeighboursTheWindowReaches) {
  // The corpus max pool's fragment rewritten to 4x4, stride 1, no padding (the suite's large
  // overlapping windows): the window reaches three columns right and none left, so each row is the
  // thread's own vector and its right neighbour's; a stride-2 pool keeps only the shifted form.
  auto b = corpus("max_pool2d");
  ir::Kernel& ker = b->graphs[0]->kernels.at(0);
  const std::string from = "[3, 3], [2, 2], [1, 1], [1, 1], False", to = "[4, 4], [1, 1], [0, 0], [1, 1], False";
  ASSERT_NE(ker.comment.find(from), std::string::npos);
  ker.comment.replace(ker.comment.find(from), from.size(), to);
  auto p = pool_profile(*b, tensor({4, 16, 32, 32}), tensor({4, 16, 29, 29}), 4 * 16 * 29 * 29);
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  size_t windows = 0;
  for (const auto& c : cands) {
    if (!c.description.starts_with("pool2d register windows")) continue;
    ++windows;
    EXPECT_NE(c.source.find("rt = tl.load(ptr + 4, rok & (col + 4 < W)"), std::string::npos);
    EXPECT_EQ(c.source.find("lf = tl.load("), std::string::npos);
    // Output column j of a chunk: input columns j..j+3 of the chunk and its right neighbour.
    EXPECT_NE(c.source.find("h_3 = triton_helpers.maximum(triton_helpers.maximum(triton_helpers.maximum(m_3, rt_0), "
                            "rt_1), rt_2)"),
              std::string::npos);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  EXPECT_GT(windows, 0u);
  EXPECT_LT(cands.size(), 24u);  // beside them only a few shifted tiles: a single-op budget screens them all
  auto s2 = corpus("max_pool2d");
  auto q = pool_profile(*s2, tensor({4, 16, 32, 32}), tensor({4, 16, 16, 16}), 4 * 16 * 16 * 16);
  for (const auto& c : agents::templates::instantiate(q, &why))
    EXPECT_FALSE(c.description.starts_with("pool2d register windows")) << c.description;
}

TEST(Pool2dTemplate, DeclinesShapesThatDoNotMatch) {
  auto b = corpus("max_pool2d");
  std::string why;
  // An output shape the parameters cannot produce.
  auto p = pool_profile(*b, tensor({4, 16, 32, 32}), tensor({4, 16, 15, 15}), 4 * 16 * 15 * 15);
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("output shape"), std::string::npos);
  // A channels-last input.
  json cl = tensor({4, 16, 32, 32});
  cl["stride"] = {16384, 1, 512, 16};
  p = pool_profile(*b, cl, tensor({4, 16, 16, 16}), 4 * 16 * 16 * 16);
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
}

TEST(Search, EndToEndRetryLeavesOutTheKernelThatSavesLeast) {
  auto outcome = [](std::optional<double> ms, double calls, std::optional<double> speedup, bool chosen) {
    search::KernelOutcome k;
    k.profile.time_ms = ms, k.profile.calls_per_run = calls, k.speedup = speedup;
    if (chosen) k.chosen = 0;
    return k;
  };
  // Savings per run (a profiled time is per run, all calls together; calls do not scale it): 1.0 x (1 - 1/2) =
  // 0.5; 0.2 x (1 - 1/1.5) = 0.067; 5.0 (not chosen); 0.1 x (1 - 1/1.1) = 0.009.
  std::vector<search::KernelOutcome> ks = {outcome(1.0, 1, 2.0, true), outcome(0.2, 3, 1.5, true),
                                           outcome(5.0, 1, std::nullopt, false), outcome(0.1, 1, 1.1, true)};
  EXPECT_EQ(search::least_saving_accepted(ks), 3u);
  ks[3].chosen.reset();
  EXPECT_EQ(search::least_saving_accepted(ks), 1u);
  ks[1].chosen.reset();
  EXPECT_FALSE(search::least_saving_accepted(ks).has_value());  // one kernel left: nothing to leave out
  // CPU mode (no times): the last chosen kernel goes first.
  std::vector<search::KernelOutcome> cpu = {outcome(std::nullopt, 0, std::nullopt, true),
                                            outcome(std::nullopt, 0, std::nullopt, true)};
  EXPECT_EQ(search::least_saving_accepted(cpu), 1u);
  // A kernel called four times a run saves 0.3 x (1 - 1/2) = 0.15 per run, less than one called once saving 0.2.
  std::vector<search::KernelOutcome> calls = {outcome(0.3, 4, 2.0, true), outcome(0.4, 1, 2.0, true)};
  EXPECT_EQ(search::least_saving_accepted(calls), 0u);
}

TEST(RowSoftmaxStats, CrossEntropysRowStatisticsInOnePass) {
  // cross_entropy: prepare_softmax_online stores each row's max (out_ptr0) and sum of exp (out_ptr1).
  auto b = corpus("cross_entropy");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", {tensor({128, 500}), tensor({128, 1}), tensor({128, 1}), value(128), value(500)}}}};
  ASSERT_EQ(p.family, "softmax");
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  for (const auto& c : cands) {
    EXPECT_TRUE(c.description.starts_with("row softmax stats one-pass")) << c.description;
    EXPECT_NE(c.source.find("tl.store(out_ptr0 + rows, m.to("), std::string::npos);
    EXPECT_NE(c.source.find("tl.store(out_ptr1 + rows, s.to("), std::string::npos);
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.description;
  }
  // The roles come from the kernel, not the order of its pointers: stores swapped, roles swapped.
  ir::Kernel swapped = *p.kernel;
  auto swap = [&](const std::string& a, const std::string& z) {
    size_t at = swapped.source.find(a);
    ASSERT_NE(at, std::string::npos) << a;
    swapped.source.replace(at, a.size(), z);
  };
  swap("tl.store(out_ptr0 + (x0), tmp6, xmask)", "tl.store(out_ptr0 + (x0), tmp12, xmask)");
  swap("tl.store(out_ptr1 + (x0), tmp12, xmask)", "tl.store(out_ptr1 + (x0), tmp6, xmask)");
  p.kernel = &swapped;
  auto sw = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(sw.empty()) << why;
  EXPECT_NE(sw.front().source.find("tl.store(out_ptr1 + rows, m.to("), std::string::npos);
  // Rows that divide XBLOCK (8192 of them on the H200): Inductor stores with mask `None`. Same roles.
  ir::Kernel unmasked = *p.kernel;
  for (std::string a : {"tl.store(out_ptr0 + (x0), tmp12, xmask)", "tl.store(out_ptr1 + (x0), tmp6, xmask)"}) {
    size_t at = unmasked.source.find(a);
    ASSERT_NE(at, std::string::npos) << a;
    unmasked.source.replace(at + a.size() - 6, 5, "None");
  }
  p.kernel = &unmasked;
  auto um = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(um.empty()) << why;
  EXPECT_NE(um.front().source.find("tl.store(out_ptr1 + rows, m.to("), std::string::npos);
  p.kernel = &swapped;
  // A third value stored per row is not a softmax's statistics: declined.
  ir::Kernel extra = *p.kernel;
  extra.source.insert(extra.source.find("    tl.store(out_ptr0"), "    tl.store(out_ptr0 + (x0), tmp7, xmask)\n");
  p.kernel = &extra;
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("not a row max and a row sum"), std::string::npos) << why;
}

TEST(Roofline, GemmFlopsFromTheLaunchShapes) {
  using kopt::testing::tensor;
  std::vector<bool> out_last = {false, false, true};
  EXPECT_EQ(profile::gemm_flops({tensor({64, 32}), tensor({32, 16}), tensor({64, 16})}, out_last),
            2ull * 64 * 16 * 32);
  // B stored [N, K] (a linear layer's weight, q @ k^T) and a batch of 8.
  EXPECT_EQ(profile::gemm_flops({tensor({8, 64, 32}), tensor({8, 16, 32}), tensor({8, 64, 16})}, out_last),
            2ull * 8 * 64 * 16 * 32);
  // A bias vector between the operands does not confuse the match; K must agree.
  EXPECT_EQ(profile::gemm_flops({tensor({64, 32}), tensor({16}), tensor({32, 16}), tensor({64, 16})},
                                {false, false, false, true}),
            2ull * 64 * 16 * 32);
  EXPECT_FALSE(profile::gemm_flops({tensor({64, 32}), tensor({48, 16}), tensor({64, 16})}, out_last));
  EXPECT_FALSE(profile::gemm_flops({tensor({64, 32}), tensor({32, 16}), tensor({64, 16})}, {false, false, false}));
}

TEST(Roofline, MatmulTemplateFloorCountsItsFlops) {
  // Inductor's mm template (fp32, ALLOW_TF32 False): 256x128 @ 128x256. Its floor is the larger of
  // bytes over bandwidth and FLOPs over the measured fp32 rate, and it says which bounds it.
  auto b = corpus("matmul__max-autotune-no-cudagraphs");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  ASSERT_NE(k.source.find("tl.dot("), std::string::npos);
  using kopt::testing::tensor;
  json launch = {{"args", {tensor({256, 128}), tensor({128, 256}), tensor({256, 256})}}};
  profile::Cost c = profile::launch_cost(k, launch);
  ASSERT_TRUE(c.flops_known);
  EXPECT_EQ(c.flops, 2ull * 256 * 256 * 128);
  EXPECT_EQ(c.flops_rate, "fp32");
  json slow = {{"copy_bytes_per_s", 4e12}, {"matmul_flops_per_s", {{"fp32", 5e13}, {"bf16", 8e14}}}};
  auto floor = profile::floor_ms(c, slow);
  ASSERT_TRUE(floor);
  EXPECT_NEAR(*floor, 2.0 * 256 * 256 * 128 / 5e13 * 1e3, 1e-12);
  EXPECT_EQ(profile::bottleneck(c, slow), "compute");
  json fast = {{"copy_bytes_per_s", 4e12}, {"matmul_flops_per_s", {{"fp32", 5e16}}}};
  EXPECT_NEAR(*profile::floor_ms(c, fast), static_cast<double>(c.bytes()) / 4e12 * 1e3, 1e-12);
  EXPECT_EQ(profile::bottleneck(c, fast), "memory");
  // No rate measured for its dtype: no floor rather than a bytes-only one.
  EXPECT_FALSE(profile::floor_ms(c, {{"copy_bytes_per_s", 4e12}}));
  // Shapes that do not form a GEMM: FLOPs unknown, no floor, bottleneck unknown.
  profile::Cost odd = profile::launch_cost(k, {{"args", {tensor({256, 128}), tensor({64, 256}), tensor({256, 256})}}});
  EXPECT_FALSE(odd.flops_known);
  EXPECT_FALSE(profile::floor_ms(odd, slow));
  EXPECT_EQ(profile::bottleneck(odd, slow), "unknown");
}

TEST(Roofline, AFloorFarAboveTheMeasuredTimeIsDropped) {
  // A kernel measured at a tenth of its counted floor reads only part of what the count assumes (an
  // indexed load): the profiler gives it no floor rather than call it "at its floor". One measured
  // just under its floor (noise) keeps it.
  auto b = corpus("softmax_large");
  agents::KernelProfile p;
  p.kernel = &b->graphs[0]->kernels.at(0);
  p.launches = {softmax_launch()};
  json ceilings = {{"copy_bytes_per_s", 4e12}};
  double floor = 2.0 * 8192 * 8192 * 4 / 4e12 * 1e3;
  agents::BuiltinProfiler prof;
  p.time_ms = floor / 10;
  auto ranked = prof.rank({p}, ceilings);
  EXPECT_FALSE(ranked.at(0).floor_ms.has_value());
  EXPECT_EQ(ranked.at(0).bottleneck, "unknown");
  p.time_ms = floor * 0.97;
  ranked = prof.rank({p}, ceilings);
  ASSERT_TRUE(ranked.at(0).floor_ms.has_value());
  EXPECT_NEAR(*ranked.at(0).floor_ms, floor, 1e-9);
  EXPECT_EQ(ranked.at(0).bottleneck, "memory");
}

TEST(Planner, SkipsAKernelWithinNearFloorOfItsFloor) {
  // profile::kNearFloor is the one bound: at it the planner declines (and says by how much), above it it plans.
  agents::KernelProfile k;
  k.floor_ms = 1.0;
  k.time_ms = profile::kNearFloor;
  agents::Plan p = agents::BuiltinPlanner().plan(k);
  EXPECT_TRUE(p.strategies.empty());
  EXPECT_EQ(p.note.rfind("already within 5% of its floor (1.0500 ms vs 1.0000 ms)", 0), 0u) << p.note;
  k.time_ms = profile::kNearFloor * 1.01;
  EXPECT_EQ(agents::BuiltinPlanner().plan(k).note, "never launched in the recorded run");
}
