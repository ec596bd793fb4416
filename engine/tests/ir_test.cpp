// The IR builder and the stitcher on a hand-written Inductor-shaped module
// (data/inductor_like.py); corpus_test.cpp runs the same on real captures.
#include <gtest/gtest.h>

#include "test_util.h"

#include <fstream>
#include <sstream>

#include "artifact/ir.h"
#include "artifact/pin_config.h"
#include "stitch/stitch.h"
#include "util/error.h"

using namespace kopt;

namespace {

using kopt::testing::read;

const std::string kData = std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/";

}  // namespace

TEST(IR, KernelsAndMetadata) {
  auto a = ir::load(kData + "inductor_like.py");
  ASSERT_EQ(a->kernels.size(), 2u);
  const ir::Kernel& k0 = a->kernels[0];
  EXPECT_EQ(k0.name, "triton_poi_fused_addmm_gelu_0");
  EXPECT_EQ(k0.kind, "pointwise");
  EXPECT_EQ(k0.size_hints["x"], 4096);
  EXPECT_EQ(k0.mutated_args, std::vector<std::string>{"in_out_ptr0"});
  EXPECT_EQ(k0.aten_ops, (std::vector<std::string>{"aten.addmm", "aten.gelu"}));
  EXPECT_EQ(k0.source_nodes, (std::vector<std::string>{"addmm", "gelu"}));
  ASSERT_EQ(k0.signature.size(), 4u);
  EXPECT_EQ(k0.signature[0].dtype, "*fp32");
  EXPECT_TRUE(k0.signature[3].is_constexpr);
  EXPECT_EQ(k0.triton_meta["device"]["__call__"], "DeviceProperties");
  EXPECT_EQ(k0.triton_meta["device"]["multi_processor_count"], 132);
  EXPECT_EQ(k0.inductor_meta["grid_type"], "Grid1D");
  EXPECT_EQ(k0.decorator_args["min_elem_per_thread"], 0);
  EXPECT_NE(k0.source.find("libdevice.erf(tmp6)"), std::string::npos);
  EXPECT_EQ(k0.source.front(), '\n');

  const ir::Kernel& k1 = a->kernels[1];
  EXPECT_EQ(k1.kind, "reduction");
  EXPECT_EQ(k1.decorator_args["reduction_hint"], "ReductionHint.INNER");
  EXPECT_EQ(k1.size_hints["r0_"], 64);
  EXPECT_EQ(k1.launch_count, 1u);
}

TEST(IR, HostProgram) {
  auto a = ir::load(kData + "inductor_like.py");
  EXPECT_EQ(a->entry, "Runner.call");
  const ir::Function* f = a->entry_function();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->inputs.size(), 3u);
  EXPECT_EQ(f->inputs[2].name, "primals_3");
  EXPECT_EQ(f->inputs[0].sizes, (std::vector<std::string>{"64", "32"}));
  EXPECT_EQ(f->inputs[1].strides, (std::vector<std::string>{"1"}));
  ASSERT_EQ(f->externs.size(), 1u);
  EXPECT_EQ(f->externs[0].op, "extern_kernels.mm");
  EXPECT_EQ(f->externs[0].out, "buf0");
  ASSERT_EQ(f->launches.size(), 2u);
  const ir::Launch& l = f->launches[1];
  EXPECT_EQ(a->kernels[l.kernel].name, "triton_red_fused_sum_1");
  EXPECT_EQ(l.stream, "stream0");
  ASSERT_EQ(l.bound.size(), 4u);
  EXPECT_EQ(l.bound[0], (std::pair<std::string, std::string>{"in_ptr0", "buf1"}));
  EXPECT_EQ(l.bound[3], (std::pair<std::string, std::string>{"r0_numel", "64"}));
  EXPECT_TRUE(l.extra.empty());
  ASSERT_EQ(f->allocs.size(), 2u);
  EXPECT_EQ(f->allocs[0].dtype, "torch.float32");
  ASSERT_EQ(f->views.size(), 1u);
  EXPECT_EQ(f->views[0].base, "buf1");
  EXPECT_EQ(f->returns, (std::vector<std::string>{"buf2", "buf3"}));
  // Program order: alloc, extern, del, alias, del, (stream), launch, del, alloc, launch, view, del.
  std::vector<ir::Step::Kind> kinds;
  for (const auto& s : f->steps) kinds.push_back(s.kind);
  using K = ir::Step::Kind;
  std::vector<K> want = {K::Alloc, K::Extern, K::Del, K::Alias, K::Del, K::Other, K::Launch,
                         K::Del,   K::Alloc,  K::Launch, K::View, K::Del};
  EXPECT_EQ(kinds, want);
}

TEST(IR, JsonHasRequiredKeys) {
  auto a = ir::load(kData + "inductor_like.py");
  auto j = ir::to_json(*a);
  ASSERT_EQ(j["kernels"].size(), 2u);
  EXPECT_EQ(j["kernels"][0]["launches"], 1);
  EXPECT_EQ(j["extern_calls"][0]["op"], "extern_kernels.mm");
  EXPECT_EQ(j["inputs"].size(), 3u);
}

TEST(IR, NotAnInductorModule) {
  try {
    ir::build("import os\nprint(os.getcwd())\n", "plain.py");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("plain.py:1:1: not an Inductor output module"), std::string::npos);
  }
}

TEST(IR, UnknownDecoratorKindIsLocated) {
  std::string src = read(kData + "inductor_like.py");
  size_t at = src.find("@triton_heuristics.reduction(");
  src.replace(at, std::string("@triton_heuristics.reduction(").size(), "@triton_heuristics.mystery(");
  try {
    ir::build(src, "m.py");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown heuristics decorator `triton_heuristics.mystery`"), std::string::npos) << msg;
    // Line of the decorator inside the module file.
    size_t line = std::count(src.begin(), src.begin() + static_cast<long>(at), '\n') + 1;
    EXPECT_NE(msg.find("m.py:" + std::to_string(line) + ":"), std::string::npos) << msg;
  }
}

TEST(Stitch, NoReplacementIsByteIdentical) {
  auto a = ir::load(kData + "inductor_like.py");
  EXPECT_EQ(stitch::stitch(*a, {}), read(kData + "inductor_like.py"));
}

TEST(Stitch, ReplacesOnlyTheNamedKernel) {
  auto a = ir::load(kData + "inductor_like.py");
  std::string src = a->kernels[1].source;
  std::string edited = src;
  edited.replace(edited.find("evict_first"), 11, "evict_last");
  std::string out = stitch::stitch(*a, {{"triton_red_fused_sum_1", edited, "k.py"}});
  auto b = ir::build(out, "out.py");
  ASSERT_EQ(b->kernels.size(), 2u);
  EXPECT_EQ(b->kernels[1].source, edited);
  EXPECT_EQ(b->kernels[0].source, a->kernels[0].source);
  // Everything outside the literal is unchanged.
  const std::string orig = read(kData + "inductor_like.py");
  EXPECT_EQ(out.substr(0, a->kernels[1].literal.begin.offset), orig.substr(0, a->kernels[1].literal.begin.offset));
  EXPECT_EQ(out.substr(out.size() - (orig.size() - a->kernels[1].literal.end.offset)),
            orig.substr(a->kernels[1].literal.end.offset));
}

TEST(Stitch, KeptKernelsRunUnderTheBaselinesSettledConfigs) {
  // With a replacement, every kernel the module keeps is pinned to the config the baseline's autotuner
  // settled on (the worker's launch records), so loading the module does not autotune them again.
  auto a = ir::load(kData + "inductor_like.py");
  nlohmann::json records = nlohmann::json::array(
      {{{"name", "triton_poi_fused_addmm_gelu_0"}, {"config", {{"XBLOCK", 256}, {"num_warps", 4}, {"num_stages", 1}}}},
       {{"name", "triton_red_fused_sum_1"}, {"config", {{"XBLOCK", 1}, {"R0_BLOCK", 2048}, {"num_warps", 16}, {"num_stages", 1}}}},
       {{"name", "triton_red_fused_sum_1"}}});  // a record without a config (the CPU) adds nothing
  stitch::Pins pins = stitch::pins_of(records);
  ASSERT_EQ(pins.size(), 2u);
  std::string edited = a->kernels[1].source;
  edited.replace(edited.find("evict_first"), 11, "evict_last");
  auto b = ir::build(stitch::stitch(*a, {{"triton_red_fused_sum_1", edited, "k.py"}}, pins), "out.py");
  ASSERT_EQ(b->kernels.size(), 2u);
  EXPECT_EQ(b->kernels[1].source, edited);  // the replacement as given
  EXPECT_EQ(b->kernels[0].kind, "fixed_config");
  EXPECT_NE(b->kernels[0].source.find("config={'XBLOCK': 256, 'num_warps': 4, 'num_stages': 1}"), std::string::npos);
  // Only the decorator changed: the kernel body is the baseline's.
  const std::string& orig = a->kernels[0].source;
  EXPECT_EQ(b->kernels[0].source.substr(b->kernels[0].source.find("@triton.jit")), orig.substr(orig.find("@triton.jit")));
  // No replacement: the module's own text, pins or not.
  EXPECT_EQ(stitch::stitch(*a, {}, pins), read(kData + "inductor_like.py"));
  // Kinds whose launch fixed_config does not reproduce keep their decorator.
  ir::Kernel templ = a->kernels[0];
  templ.kind = "template";
  EXPECT_FALSE(ir::pin_baseline_config(templ, templ.source, pins.at(templ.name)));
  EXPECT_TRUE(ir::pin_baseline_config(a->kernels[0], a->kernels[0].source, pins.at(templ.name)));
}

TEST(Stitch, RefusesWrongKernel) {
  auto a = ir::load(kData + "inductor_like.py");
  std::string renamed = a->kernels[1].source;
  renamed.replace(renamed.find("def triton_red_fused_sum_1"), 26, "def triton_red_fused_sum_9");
  EXPECT_THROW(stitch::stitch(*a, {{"triton_red_fused_sum_1", renamed, "k.py"}}), UserError);
  EXPECT_THROW(stitch::stitch(*a, {{"no_such_kernel", a->kernels[1].source, "k.py"}}), UserError);
  EXPECT_THROW(stitch::stitch(*a, {{"triton_red_fused_sum_1", "x = 1\n", "k.py"}}), UserError);
  std::string twice = a->kernels[1].source + "\n@triton.jit\ndef triton_red_fused_sum_1(a):\n    pass\n";
  EXPECT_THROW(stitch::stitch(*a, {{"triton_red_fused_sum_1", twice, "k.py"}}), UserError);
  EXPECT_THROW(stitch::stitch(*a, {{"triton_red_fused_sum_1", a->kernels[1].source, "a.py"},
                                   {"triton_red_fused_sum_1", a->kernels[1].source, "b.py"}}),
               UserError);
}

TEST(Stitch, QuotesAndBackslashesSurvive) {
  auto a = ir::load(kData + "inductor_like.py");
  std::string src = a->kernels[0].source + "# it's a '''tricky''' \\ comment'\n";
  std::string out = stitch::stitch(*a, {{"triton_poi_fused_addmm_gelu_0", src, "k.py"}});
  auto b = ir::build(out, "out.py");
  EXPECT_EQ(b->kernels[0].source, src);
}
