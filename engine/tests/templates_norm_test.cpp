// The row-norm template on real corpus kernels: the reader recovers what each norm
// kernel computes (which pointer is the row, the weight, the bias, the output; eps
// from the source), the instances keep the entry's parameters and pass G1, and
// kernels outside what the reader can prove are declined with a reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agents/agent.h"
#include "agents/coder/templates/row_expr.h"
#include "agents/coder/templates/templates.h"
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

agents::KernelProfile profile_of(const ir::Bundle& b, size_t kernel, json args, size_t graph = 0) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[graph]->kernels.at(kernel);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", std::move(args)}}};
  return p;
}

// A layer norm's launch: (x, weight, bias, y, rows, cols).
json layer_norm_args(int64_t rows, int64_t cols, std::string dtype = "float32") {
  return {tensor({rows, cols}, dtype), tensor({cols}, dtype), tensor({cols}, dtype), tensor({rows, cols}, dtype),
          value(rows), value(cols)};
}

std::vector<agents::Candidate> instances(const agents::KernelProfile& p) {
  std::string why;
  auto c = agents::templates::instantiate(p, &why);
  EXPECT_FALSE(c.empty()) << p.kernel->name << ": " << why;
  return c;
}

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

TEST(RowExpr, ReadsLayerNormRolesAndEps) {
  auto b = corpus("layer_norm");
  std::string why;
  auto rk = agents::templates::read_row_kernel(b->graphs[0]->kernels.at(0), &why);
  ASSERT_TRUE(rk) << why;
  ASSERT_EQ(rk->stores.size(), 1u);
  const auto& y = rk->stores[0];
  EXPECT_EQ(y.at.ptr, "out_ptr2");
  EXPECT_EQ(y.at.shape(), agents::templates::kTile);
  EXPECT_EQ(y.at.x, 512);
  // y = (x - mean) * rsqrt(var + eps) * weight + bias, read from the source.
  const auto& v = y.value;
  ASSERT_EQ(v->op, "add");
  EXPECT_EQ(v->args[1]->op, "load");
  EXPECT_EQ(v->args[1]->at.ptr, "in_ptr2");  // bias
  ASSERT_EQ(v->args[0]->op, "mul");
  EXPECT_EQ(v->args[0]->args[1]->at.ptr, "in_ptr1");  // weight
  EXPECT_TRUE(has(v->key, "libdevice.rsqrt")) << v->key;
  EXPECT_TRUE(has(v->key, "1e-05")) << v->key;
  EXPECT_TRUE(has(rk->body_consts.at(0), "xnumel = 128"));
}

TEST(RowExpr, LoopedWelfordAndPersistentSumsReadAlike) {
  // layer_norm_large is a looped Welford kernel reading x twice; the reader sees one x and a
  // Welford mean / M2 of it.
  auto b = corpus("layer_norm_large");
  std::string why;
  auto rk = agents::templates::read_row_kernel(b->graphs[0]->kernels.at(0), &why);
  ASSERT_TRUE(rk) << why;
  ASSERT_EQ(rk->stores.size(), 1u);
  const std::string& key = rk->stores[0].value->key;
  EXPECT_TRUE(has(key, "wmean[](load[in_ptr0+0+1r+4096x]")) << key;
  EXPECT_TRUE(has(key, "wm2[](load[in_ptr0+0+1r+4096x]")) << key;
  // rms_norm: a sum of squares, eps 1e-06, one weight.
  auto r = corpus("rms_norm");
  rk = agents::templates::read_row_kernel(r->graphs[0]->kernels.at(0), &why);
  ASSERT_TRUE(rk) << why;
  EXPECT_TRUE(has(rk->stores[0].value->key, "1e-06"));
  EXPECT_TRUE(has(rk->stores[0].value->key, "sum[](mul[](load[in_ptr0+0+1r+512x],load[in_ptr0+0+1r+512x],),)"));
}

TEST(RowNormTemplate, AppliesToCorpusNormsAndPassesG1) {
  struct Case {
    std::string bundle;
    json args;
    std::string family;
  };
  std::vector<Case> cases = {
      {"layer_norm", layer_norm_args(128, 512), "layer_norm"},
      {"layer_norm_bf16", layer_norm_args(128, 512, "bfloat16"), "layer_norm"},
      {"layer_norm_large", layer_norm_args(16384, 4096), "layer_norm"},
      {"rms_norm", {tensor({128, 512}), tensor({512}), tensor({128, 512}), value(128), value(512)}, "rms_norm"},
  };
  for (const Case& c : cases) {
    auto b = corpus(c.bundle);
    auto p = profile_of(*b, 0, c.args);
    ASSERT_EQ(p.family, c.family) << c.bundle;
    for (const auto& cand : instances(p)) {
      EXPECT_EQ(cand.origin, "template:" + c.family);
      EXPECT_TRUE(has(cand.source, "kernelopt template row_norm")) << c.bundle;
      // The original's output written once, with the full-tile mask.
      EXPECT_TRUE(has(cand.source, "tl.store(" + std::string(c.family == "rms_norm" ? "out_ptr1" : "out_ptr2")))
          << cand.source;
      auto g1 = verify::run_g1(*p.kernel, cand.source);
      EXPECT_TRUE(g1.passed) << c.bundle << " " << cand.description << "\n" << cand.source;
    }
    if (std::getenv("KOPT_SHOW_TEMPLATE")) std::cout << instances(p).front().source << "\n";
  }
}

TEST(RowNormTemplate, FusedResidualLayerNormIsEmittedOpForOp) {
  // transformer_block's second layer norm adds the residual and the matmul bias first; the
  // reader carries that sum into the template rather than dropping it.
  auto b = corpus("transformer_block");
  const auto& ks = b->graphs[0]->kernels;
  size_t i = 0;
  while (i < ks.size() && ks[i].name.find("add_addmm_native_layer_norm") == std::string::npos) ++i;
  ASSERT_LT(i, ks.size());
  json args = {tensor({64, 64}), tensor({64}), tensor({64, 64}), tensor({64}), tensor({64}), tensor({64, 64}),
               value(64), value(64)};
  auto p = profile_of(*b, i, args);
  for (const auto& cand : instances(p)) {
    EXPECT_TRUE(has(cand.source, "in_ptr3")) << cand.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, cand.source).passed) << cand.source;
  }
}

TEST(RowNormTemplate, DeclinesWhatItCannotProve) {
  std::string why;
  // Rows too long for registers.
  auto b = corpus("layer_norm");
  auto p = profile_of(*b, 0, layer_norm_args(4, 65536));
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_TRUE(has(why, "do not fit")) << why;
  // A layer norm fused with a softmax (a max reduction the reader does not know).
  auto g = corpus("graph_break");
  ASSERT_GE(g->graphs.size(), 2u);
  agents::KernelProfile q;
  q.kernel = &g->graphs[1]->kernels.at(0);
  q.family = "layer_norm";
  q.launches = {{{"args", json::array({tensor({8, 32}), tensor({32}), tensor({32}), tensor({8, 32}), value(8),
                                       value(32)})}}};
  EXPECT_TRUE(agents::templates::instantiate(q, &why).empty());
  EXPECT_FALSE(why.empty());
  // Group norm's statistics kernel indexes groups (x // C) the template does not model, and its
  // pointwise kernel is not a reduction.
  auto gn = corpus("group_norm");
  auto r = profile_of(*gn, 1, json::array({tensor({4, 64, 16, 16}), tensor({4, 8}), tensor({4, 8}), tensor({64}),
                                           tensor({64}), tensor({4, 64, 16, 16}), value(65536)}));
  r.family = "layer_norm";
  EXPECT_TRUE(agents::templates::instantiate(r, &why).empty());
  EXPECT_TRUE(has(why, "not a reduction")) << why;
}

namespace {

// No corpus bundle holds a vector-norm kernel yet (bundles are captured on a GPU), so these
// two are written the way Inductor writes them (looped reductions, as seen in its output for
// torch.linalg.vector_norm and F.normalize) into layer_norm_large's module in place of its kernel.
std::unique_ptr<ir::Artifact> synthetic(const std::string& signature, const std::string& def) {
  std::ifstream f(fs::path(KOPT_SOURCE_DIR) / "corpus/layer_norm_large/module_0.py");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string sig = "'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'out_ptr2': '*fp32'";
  size_t s = text.find(sig);
  EXPECT_NE(s, std::string::npos);
  text.replace(s, sig.size(), signature);
  size_t d = text.find("def triton_red_fused_native_layer_norm_0(");
  size_t e = text.find("''', device_str='cuda')", d);
  text.replace(d, e - d, def);
  // The launch passes the new pointers.
  size_t l = text.find("triton_red_fused_native_layer_norm_0.run(arg2_1, arg0_1, arg1_1, buf3, ");
  EXPECT_NE(l, std::string::npos);
  text.replace(l, std::string("triton_red_fused_native_layer_norm_0.run(arg2_1, arg0_1, arg1_1, buf3, ").size(),
               "triton_red_fused_native_layer_norm_0.run(arg2_1, buf3, ");
  return ir::build(text, "synthetic.py");
}

const char* kLoopHead =
    "    rnumel = r0_numel\n"
    "    RBLOCK: tl.constexpr = R0_BLOCK\n"
    "    xoffset = tl.program_id(0) * XBLOCK\n"
    "    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n"
    "    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]\n"
    "    r0_base = tl.arange(0, R0_BLOCK)[None, :]\n"
    "    rbase = r0_base\n"
    "    x0 = xindex\n"
    "    _tmp3 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)\n"
    "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        r0_index = r0_offset + r0_base\n"
    "        r0_mask = r0_index < r0_numel\n"
    "        roffset = r0_offset\n"
    "        rindex = r0_index\n"
    "        r0_1 = r0_index\n";

}  // namespace

TEST(RowNormTemplate, VectorNormStoresTheRowNormOnce) {
  std::string def = std::string(
      "def triton_red_fused_native_layer_norm_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, "
      "R0_BLOCK : tl.constexpr):\n    xnumel = 4096\n    r0_numel = 16384\n") + kLoopHead +
      "        tmp0 = tl.load(in_ptr0 + (r0_1 + 16384*x0), r0_mask, eviction_policy='evict_first', other=0.0)\n"
      "        tmp1 = tmp0 * tmp0\n"
      "        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])\n"
      "        tmp4 = _tmp3 + tmp2\n"
      "        _tmp3 = tl.where(r0_mask, tmp4, _tmp3)\n"
      "    tmp3 = tl.sum(_tmp3, 1)[:, None]\n"
      "    tmp5 = libdevice.sqrt(tmp3)\n"
      "    tl.debug_barrier()\n"
      "    tl.store(in_out_ptr0 + (x0), tmp5, None)\n";
  auto a = synthetic("'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32'", def);
  agents::KernelProfile p;
  p.kernel = &a->kernels.at(0);
  p.family = "vector_norm";
  p.launches = {{{"args", {tensor({4096}), tensor({4096, 16384}), value(4096), value(16384)}}}};
  auto cands = instances(p);
  for (const auto& c : cands) {
    EXPECT_TRUE(has(c.source, "RB: tl.constexpr = 16384")) << c.source;
    EXPECT_TRUE(has(c.source, "tl.store(in_out_ptr0 + (xx), t3, xm)")) << c.source;
    EXPECT_TRUE(has(c.source, "libdevice.sqrt(")) << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.source;
  }
  // 16384 fp32 per row: one row per program, 8, 16 or 32 warps (64, 32 or 16 elements a thread).
  EXPECT_EQ(cands.size(), 3u);
  // Newer Inductor writes the correctly rounded tl.sqrt_rn where it wrote libdevice.sqrt: the same
  // candidates, the kernel's own call kept (a Frobenius normalize captured with torch 2.13 was declined).
  size_t at = def.find("libdevice.sqrt(tmp3)");
  def.replace(at, std::string("libdevice.sqrt").size(), "tl.sqrt_rn");
  auto b = synthetic("'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32'", def);
  p.kernel = &b->kernels.at(0);
  auto rn = instances(p);
  ASSERT_EQ(rn.size(), 3u);
  for (const auto& c : rn) {
    EXPECT_TRUE(has(c.source, "tl.sqrt_rn(")) << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.source;
  }
}

TEST(RowNormTemplate, L2NormalizeReadsTheRowOnceAndKeepsEps) {
  std::string def = std::string(
      "def triton_red_fused_native_layer_norm_0(in_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, "
      "R0_BLOCK : tl.constexpr):\n    xnumel = 8192\n    r0_numel = 4096\n") + kLoopHead +
      "        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask, eviction_policy='evict_last', other=0.0)\n"
      "        tmp1 = tmp0 * tmp0\n"
      "        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])\n"
      "        tmp4 = _tmp3 + tmp2\n"
      "        _tmp3 = tl.where(r0_mask, tmp4, _tmp3)\n"
      "    tmp3 = tl.sum(_tmp3, 1)[:, None]\n"
      "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n"
      "        r0_index = r0_offset + r0_base\n"
      "        r0_mask = r0_index < r0_numel\n"
      "        r0_1 = r0_index\n"
      "        tmp5 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask, eviction_policy='evict_first', other=0.0)\n"
      "        tmp6 = libdevice.sqrt(tmp3)\n"
      "        tmp7 = 1e-12\n"
      "        tmp8 = triton_helpers.maximum(tmp6, tmp7)\n"
      "        tmp9 = tmp5 / tmp8\n"
      "        tl.store(out_ptr1 + (r0_1 + 4096*x0), tmp9, r0_mask)\n";
  auto a = synthetic("'in_ptr0': '*fp32', 'out_ptr1': '*fp32'", def);
  agents::KernelProfile p;
  p.kernel = &a->kernels.at(0);
  p.family = "vector_norm";
  p.launches = {{{"args", {tensor({8192, 4096}), tensor({8192, 4096}), value(8192), value(4096)}}}};
  for (const auto& c : instances(p)) {
    // x is loaded once (the second loop's reload is the same load).
    size_t first = c.source.find("tl.load(in_ptr0");
    EXPECT_NE(first, std::string::npos);
    EXPECT_EQ(c.source.find("tl.load(in_ptr0", first + 1), std::string::npos) << c.source;
    EXPECT_TRUE(has(c.source, "triton_helpers.maximum(")) << c.source;
    EXPECT_TRUE(has(c.source, "= 1e-12")) << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.source;
  }
}

TEST(RowNormTemplate, GroupNormStatisticsKernelIsARowKernel) {
  // group_norm's first kernel: Welford mean and M2 over each (n, group) row of 2048 contiguous
  // elements, stored per row.
  auto b = corpus("group_norm");
  auto p = profile_of(*b, 0, json::array({tensor({4, 64, 16, 16}), tensor({4, 8, 1, 1}), tensor({4, 8, 1, 1}),
                                          value(32), value(2048)}));
  ASSERT_EQ(p.family, "group_norm");
  for (const auto& c : instances(p)) {
    EXPECT_TRUE(has(c.source, "tl.store(out_ptr0 + (xx), ")) << c.source;
    EXPECT_TRUE(has(c.source, "tl.store(out_ptr1 + (xx), ")) << c.source;
    EXPECT_TRUE(verify::run_g1(*p.kernel, c.source).passed) << c.source;
  }
}

TEST(RowExpr, LoopValuesAreOnlyUsedAsTheRowsAccumulation) {
  std::string head = std::string(
      "def triton_red_fused_native_layer_norm_0(in_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, "
      "R0_BLOCK : tl.constexpr):\n    xnumel = 8192\n    r0_numel = 4096\n") + kLoopHead +
      "        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask, eviction_policy='evict_last', other=0.0)\n"
      "        tmp2 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n"
      "        tmp4 = _tmp3 + tmp2\n"
      "        _tmp3 = tl.where(r0_mask, tmp4, _tmp3)\n";
  std::string why;
  // The running accumulator itself (not the row's sum) used and stored: refused.
  auto a = synthetic("'in_ptr0': '*fp32', 'out_ptr1': '*fp32'",
                     head + "        tl.store(out_ptr1 + (r0_1 + 4096*x0), _tmp3 * 2.0, r0_mask)\n");
  EXPECT_FALSE(agents::templates::read_row_kernel(a->kernels.at(0), &why));
  EXPECT_TRUE(has(why, "accumulator")) << why;
  // A per-block value used after the loop (it holds only the last block): refused.
  a = synthetic("'in_ptr0': '*fp32', 'out_ptr1': '*fp32'",
                head + "    tmp3 = tl.sum(_tmp3, 1)[:, None]\n    tl.store(out_ptr1 + (x0), tmp3 + tmp0, None)\n");
  EXPECT_FALSE(agents::templates::read_row_kernel(a->kernels.at(0), &why));
  EXPECT_TRUE(has(why, "after its loop")) << why;
  // The same kernel storing the accumulated sum is a row kernel.
  a = synthetic("'in_ptr0': '*fp32', 'out_ptr1': '*fp32'",
                head + "    tmp3 = tl.sum(_tmp3, 1)[:, None]\n    tl.store(out_ptr1 + (x0), tmp3, None)\n");
  EXPECT_TRUE(agents::templates::read_row_kernel(a->kernels.at(0), &why)) << why;
}

TEST(RowExpr, ABufferReadBackAfterItsStoreIsRefused) {
  // The norm stored into a reused buffer and loaded back from it: the template would load it
  // before writing it.
  std::string def = std::string(
      "def triton_red_fused_native_layer_norm_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, "
      "R0_BLOCK : tl.constexpr):\n    xnumel = 4096\n    r0_numel = 16384\n") + kLoopHead +
      "        tmp0 = tl.load(in_ptr0 + (r0_1 + 16384*x0), r0_mask, eviction_policy='evict_first', other=0.0)\n"
      "        tmp2 = tl.broadcast_to(tmp0 * tmp0, [XBLOCK, R0_BLOCK])\n"
      "        tmp4 = _tmp3 + tmp2\n"
      "        _tmp3 = tl.where(r0_mask, tmp4, _tmp3)\n"
      "    tmp3 = tl.sum(_tmp3, 1)[:, None]\n"
      "    tl.store(in_out_ptr0 + (x0), tmp3, None)\n"
      "    tmp5 = tl.load(in_out_ptr0 + (x0), None)\n"
      "    tl.store(in_out_ptr0 + (x0), libdevice.sqrt(tmp5), None)\n";
  auto a = synthetic("'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32'", def);
  std::string why;
  EXPECT_FALSE(agents::templates::read_row_kernel(a->kernels.at(0), &why));
  EXPECT_TRUE(has(why, "loaded after it is stored")) << why;
}
