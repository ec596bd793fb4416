// The cascade's worker-side pieces with the real worker in CPU mode on corpus
// bundles: the tolerances request field, G1's `compiles` finding, and the
// end-to-end gate (correctness evidence, "not_measured" timing on the CPU, a
// wrong stitched module failing). The full cascade on hostile and honest
// candidates is tests/python/test_error_suite.py.
#include <cmath>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "agents/agent.h"
#include "agents/coder/rewrites/tail_mask.h"
#include "agents/coder/templates/templates.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "verify/compiles.h"
#include "verify/end_to_end.h"
#include "verify/rules.h"
#include "worker/replies.h"
#include "test_util.h"

using namespace kopt;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

using kopt::testing::cpu_worker;

const std::string kBundle = std::string(KOPT_SOURCE_DIR) + "/corpus/softmax_lastdim";

// The profile of `bundle`'s first kernel with one recorded launch of `args`.
agents::KernelProfile first_kernel(const ir::Bundle& b, const json& args) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[0]->kernels.at(0);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", args}}};
  return p;
}

// The captured 50304-wide bf16 softmax (tests/python/data/softmax_rows_50k_small, 4 rows) on its launch.
agents::KernelProfile rows_50k_profile(const ir::Bundle& b) {
  using kopt::testing::tensor;
  using kopt::testing::value;
  return first_kernel(b, {tensor({4, 50304}, "bfloat16"), tensor({4, 50304}, "bfloat16"), value(4), value(50304)});
}

// `source` through the cascade on the CPU worker: accepted, with G1-G3 passed (G4 is not measured).
verify::CascadeResult expect_g1_to_g3_pass(const ir::Bundle& b, const ir::Kernel& k, const std::string& source,
                                           int seeds) {
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = std::chrono::seconds(300);
  o.seeds = seeds;
  verify::CascadeResult r = verify::run_cascade(sup, b, 0, k, source, o);
  EXPECT_TRUE(r.accepted) << kopt::results::cascade_json(r).dump(2);
  EXPECT_GE(r.gates.size(), 3u);
  for (size_t g = 0; g < 3 && g < r.gates.size(); ++g) EXPECT_EQ(r.gates[g].status, verify::GateStatus::passed) << r.gates[g].gate;
  return r;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

}  // namespace

TEST(CascadeTolerances, RequestFieldCoversEveryFloatDtype) {
  verify::Tolerances t;
  json j = t.to_json();
  EXPECT_EQ(j["float32"], json({{"atol", 1e-4}, {"rtol", 1e-4}}));
  EXPECT_EQ(j["float64"], j["float32"]);  // fp64 uses the fp32 pair
  EXPECT_EQ(j["float16"], json({{"atol", 1e-2}, {"rtol", 1e-2}}));
  EXPECT_EQ(j["bfloat16"], j["float16"]);
  t.atol_half = 0.5;
  EXPECT_EQ(t.to_json()["bfloat16"]["atol"], 0.5);
}

TEST(CascadeRules, TimingVerdictNeedsTheSlowEndToBeatTheFastEnd) {
  auto summary = [](double p20, double med, double p80, double synced) {
    return worker::parse_timing(
        json{{"p20_ms", p20}, {"median_ms", med}, {"p80_ms", p80}, {"synced", {{"median_ms", synced}}}}, "test");
  };
  worker::Timing base = summary(1.0, 1.05, 1.1, 1.1);
  EXPECT_TRUE(verify::timing_verdict(base, summary(0.8, 0.85, 0.9, 0.9), 1.03, "candidate").passed);
  // Faster at the median, but its p80 is within the baseline's noise: not a win.
  EXPECT_FALSE(verify::timing_verdict(base, summary(0.8, 0.9, 0.99, 0.95), 1.03, "candidate").passed);
  // Fast on the timed stream, but 2 ms more device time after a full synchronize: hidden work.
  verify::Verdict hidden = verify::timing_verdict(base, summary(0.5, 0.5, 0.5, 2.5), 1.03, "candidate");
  EXPECT_FALSE(hidden.passed);
  EXPECT_TRUE(hidden.evidence.contains("reason"));
}

TEST(CascadeRules, Float64RuleAllowsForTheBaselinesOwnRunToRunSpread) {
  // A run_module reply: one output each, the candidate vs the baseline outside tolerance.
  auto reply = [](double cand_err, double base_err, std::optional<double> spread) {
    auto one = [](double rel) { return json{{"outputs", json::array({json{{"max_rel", rel}}})}}; };
    json r = {{"ok", true}, {"vs_baseline", {{"ok", false}, {"outputs", json::array({json{{"max_rel", 3e-3}}})}}},
              {"candidate_vs_fp64", one(cand_err)}, {"baseline_vs_fp64", one(base_err)}};
    if (spread) r["baseline_self"] = one(*spread);
    return worker::parse_run_module(r, true);
  };
  verify::CascadeOptions o;
  // A split scan's baseline: 1.87e-7 from float64, 1.49e-7 from itself run again. A candidate at
  // 2.9e-7 is beyond the 5% slack but inside the baseline's own band.
  verify::Verdict in_band = verify::model_verdict(reply(2.9e-7, 1.87e-7, 1.49e-7), o, true);
  EXPECT_TRUE(in_band.passed);
  EXPECT_NEAR(in_band.evidence["allowed_max_rel"].get<double>(), 1.87e-7 + 1.49e-7, 1e-15);
  // The same candidate against a deterministic baseline: the slack alone decides, and it fails.
  EXPECT_FALSE(verify::model_verdict(reply(2.9e-7, 1.87e-7, 0.0), o, true).passed);
  EXPECT_FALSE(verify::model_verdict(reply(2.9e-7, 1.87e-7, std::nullopt), o, false).passed);
  // A real accuracy loss stays a failure whatever the spread.
  EXPECT_FALSE(verify::model_verdict(reply(1e-3, 1.87e-7, 1.49e-7), o, false).passed);
  EXPECT_TRUE(verify::model_verdict(reply(1.9e-7, 1.87e-7, 0.0), o, false).passed);  // within the slack
}

TEST(CascadeRules, Float64RuleAllowsTwoUnitsInTheLastPlaceOfTheOutputsDtype) {
  // A mean over 4001 float32 values (H200): the baseline 1.5e-7 from float64 relative to the output's largest
  // magnitude, a launch config's other summation order 2.8e-7: both a few units in the last place.
  auto reply = [](double cand_err, double base_err, const char* dtype) {
    auto one = [&](double rel) {
      return json{{"outputs", json::array({json{{"max_rel", rel}, {"dtype", "float64"}, {"got_dtype", dtype}}})}};
    };
    json r = {{"ok", true}, {"vs_baseline", {{"ok", false}, {"outputs", json::array({json{{"max_rel", 3e-7}}})}}},
              {"candidate_vs_fp64", one(cand_err)}, {"baseline_vs_fp64", one(base_err)}};
    return worker::parse_run_module(r, true);
  };
  EXPECT_DOUBLE_EQ(verify::rounding_floor("float32"), std::ldexp(1.0, -22));
  EXPECT_DOUBLE_EQ(verify::rounding_floor("bfloat16"), std::ldexp(1.0, -6));
  EXPECT_DOUBLE_EQ(verify::rounding_floor("int64"), 0.0);
  verify::CascadeOptions o;
  verify::Verdict v = verify::model_verdict(reply(2.8e-7, 1.5e-7, "float32"), o, true);
  EXPECT_TRUE(v.passed) << v.evidence.dump();
  EXPECT_NEAR(v.evidence["allowed_max_rel"].get<double>(), 1.5e-7 + std::ldexp(1.0, -22), 1e-15);
  EXPECT_DOUBLE_EQ(v.evidence["rounding_floor"].get<double>(), std::ldexp(1.0, -22));
  // Beyond two units: an accuracy loss, not a reordering.
  EXPECT_FALSE(verify::model_verdict(reply(4.2e-7, 1.5e-7, "float32"), o, true).passed);
  // The same numbers for a float64 output: its floor is far below them, the slack decides.
  EXPECT_FALSE(verify::model_verdict(reply(2.8e-7, 1.5e-7, "float64"), o, true).passed);
}

TEST(CascadeRules, AnElementwiseMatchBeyondItsScaleIsNamed) {
  // A bf16 output whose values all sit near 2e-5: 58% of its scale off, yet within atol 0.01 elementwise.
  json c = {{"ok", true},
            {"args", json::array({json{{"arg", 0}, {"ok", true}, {"scaled_ok", true}, {"max_rel", 0.004}},
                                  json{{"arg", 1}, {"ok", true}, {"scaled_ok", false}, {"max_rel", 0.58}},
                                  json{{"arg", 2}, {"ok", false}, {"scaled_ok", false}, {"max_rel", 0.9}},
                                  json{{"arg", 3}, {"ok", true}}})}};  // an integer tensor: no scale
  json off = verify::beyond_scale(c, "args");
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off[0]["arg"], 1);  // arg 2 fails elementwise already: G2's own mismatch, not this rule's
  EXPECT_TRUE(verify::beyond_scale(json{{"args", json::array()}}, "args").empty());
}

TEST(CascadeWorker, CompilesFindingAndEndToEndGate) {
  auto b = ir::load_bundle(kBundle);
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = 300s;

  verify::Finding ok = verify::check_compiles(sup, b->dir, 0, k, k.source, o);
  EXPECT_TRUE(ok.passed) << ok.message;
  EXPECT_EQ(ok.check, "compiles");
  verify::Finding bad = verify::check_compiles(
      sup, b->dir, 0, k, replace_once(k.source, "R0_BLOCK: tl.constexpr = 512", "R0_BLOCK: tl.constexpr = 500"), o);
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.message.find("power of 2"), std::string::npos) << bad.message;

  // The module exactly as captured: correct, and on the CPU not timed.
  std::string module = stitch::stitch(*b->graphs[0], {});
  verify::GateRecord same = verify::end_to_end(sup, *b, {module}, o);
  EXPECT_EQ(same.gate, "E2E");
  EXPECT_EQ(same.status, verify::GateStatus::not_measured) << same.evidence.dump(2);
  EXPECT_EQ(same.evidence["correctness"]["rule"], "within tolerance of the baseline");
  EXPECT_LE(same.evidence["correctness"]["vs_baseline_max_rel"].get<double>(), 1e-4);
  EXPECT_EQ(same.evidence["correctness"]["baseline_self_max_rel"].get<double>(), 0.0);  // the CPU run repeats exactly
  // Within tolerance: the model was not run in float64 (verify::model_run); the wrong kernel below was.
  EXPECT_FALSE(same.evidence["correctness"].contains("candidate_vs_fp64_max_rel")) << same.evidence.dump(2);
  EXPECT_FALSE(same.evidence.contains("optimized"));

  // A stitched kernel that computes exp(1.5 x): wrong against the baseline and against float64.
  std::string wrong_kernel = replace_once(k.source, "libdevice.exp(", "libdevice.exp(1.5 * ");
  std::string wrong = stitch::stitch(*b->graphs[0], {{k.name, wrong_kernel, "test"}});
  verify::GateRecord failed = verify::end_to_end(sup, *b, {wrong}, o);
  EXPECT_EQ(failed.status, verify::GateStatus::failed) << failed.evidence.dump(2);
  EXPECT_EQ(failed.evidence["correctness"]["rule"],
            "float64 fallback: candidate error <= max(baseline error * slack, baseline error + the baseline's "
            "run-to-run spread, baseline error + two units in the last place of the output's dtype)");
  EXPECT_GT(failed.evidence["correctness"]["candidate_vs_fp64_max_rel"].get<double>(), 1e-2);

  // A stitched module that does not even load: a failed gate with the error, never an exception.
  verify::GateRecord broken = verify::end_to_end(sup, *b, {module + "\ndef broken(:\n"}, o);
  EXPECT_EQ(broken.status, verify::GateStatus::failed);
  EXPECT_NE(broken.evidence["correctness"].value("error", "").find("SyntaxError"), std::string::npos)
      << broken.evidence.dump(2);
}

TEST(CascadeWorker, OneSegmentSplitScanPassesTheCascadeOnTheCapturedScan) {
  // The captured split scan (2 rows of 64K, Inductor's lookback through a workspace), with the
  // one-segment-per-row instance the template proposes for many rows: it runs on the bundle's own
  // launch through the interpreter and passes G1-G3 (the dead workspace is scratch).
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/cumsum_split_scan_small");
  using kopt::testing::tensor;
  using kopt::testing::value;
  agents::KernelProfile p = first_kernel(
      *b, {tensor({64, 65536}), tensor({64, 65536}), tensor({8192}, "uint8"), value(64), value(65536)});
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  ASSERT_TRUE(cands.front().description.starts_with("scan_split one segment per row")) << cands.front().description;
  expect_g1_to_g3_pass(*b, *p.kernel, cands.front().source, 2);
}

TEST(CascadeWorker, RoundingOnlyDifferencesPassG2OnConditionOfTheFloat64Rule) {
  // The captured split scan (rows of 64K: partial sums in the hundreds) with a constant 5e-4 added to
  // every output: beyond the elementwise tolerance where the prefix sums are small, but under a tenth
  // of rtol relative to the output's scale, so G2 lets it through as rounding-level only — and G3,
  // bound to the float64 rule, must then reject it (its error against float64 exceeds the baseline's).
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/cumsum_split_scan_small");
  const ir::Kernel& k = b->graphs[0]->kernels.at(0);
  std::string off = replace_once(k.source, "tl.store(out_ptr0 + (r0_1 + 65536*x0), tmp9, None)",
                                 "tl.store(out_ptr0 + (r0_1 + 65536*x0), tmp9 + 5e-4, None)");
  worker::Supervisor sup(cpu_worker());
  verify::CascadeOptions o;
  o.timeout = 300s;
  o.seeds = 1;
  verify::CascadeResult r = verify::run_cascade(sup, *b, 0, k, off, o);
  ASSERT_GE(r.gates.size(), 3u) << kopt::results::cascade_json(r).dump(2);
  EXPECT_EQ(r.gates[1].gate, "G2");
  EXPECT_EQ(r.gates[1].status, verify::GateStatus::passed) << r.gates[1].evidence.dump(2);
  EXPECT_TRUE(r.gates[1].evidence.value("needs_fp64", false));
  EXPECT_TRUE(verify::passed_on_rounding(r));
  for (const auto& run : r.gates[1].evidence["runs"]) EXPECT_TRUE(run.value("rounding_only", false)) << run.dump();
  EXPECT_EQ(r.gates[2].gate, "G3");
  EXPECT_EQ(r.gates[2].status, verify::GateStatus::failed) << r.gates[2].evidence.dump(2);
  EXPECT_NE(r.gates[2].evidence["rule"].get<std::string>().find("float64 rule (required"), std::string::npos);
  EXPECT_FALSE(r.accepted);

  // The end-to-end gate under the same condition: the module as captured is judged by the float64
  // rule (no shortcut through "within tolerance of the baseline") and, as accurate as itself, passes.
  o.fp64_rule_only = true;
  verify::GateRecord same = verify::end_to_end(sup, *b, {stitch::stitch(*b->graphs[0], {})}, o);
  EXPECT_EQ(same.status, verify::GateStatus::not_measured) << same.evidence.dump(2);
  EXPECT_NE(same.evidence["correctness"]["rule"].get<std::string>().find("float64 rule (required"),
            std::string::npos);
  EXPECT_TRUE(same.evidence["correctness"].contains("candidate_vs_fp64_max_rel"));  // run in float64 from the start
}

namespace {

// The captured looped softmax (rows of 8192 fp32, scaled down to 512 rows) and its one kernel's
// profile on the bundle's own launch.
std::unique_ptr<ir::Bundle> softmax_rows_8k() {
  return ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/softmax_rows_8k_small");
}

agents::KernelProfile softmax_rows_8k_profile(const ir::Bundle& b) {
  using kopt::testing::tensor;
  using kopt::testing::value;
  return first_kernel(b, {tensor({512, 8192}), tensor({512, 8192}), value(512), value(8192)});
}

}  // namespace

TEST(CascadeWorker, SoftmaxTwoPassesPassesTheCascadeOnTheCapturedSoftmax) {
  // The same captured softmax with the two-pass schedule (each row in chunks: a running max and sum,
  // then the chunks read again and written) passes G1-G3 on the bundle's own launch through the
  // interpreter, four chunks per row.
  auto b = softmax_rows_8k();
  agents::KernelProfile p = softmax_rows_8k_profile(*b);
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  std::set<std::string> sizes;
  for (const agents::Candidate& c : cands) {
    if (!c.description.starts_with("row softmax two passes")) continue;
    std::string cb = c.description.substr(c.description.find("CB="), 8);
    if (!sizes.insert(cb).second || cb != "CB=2048,") continue;  // the interpreter is slow: one is run
    EXPECT_NE(c.source.find("eviction_policy='evict_last'"), std::string::npos);
    verify::CascadeResult r = expect_g1_to_g3_pass(*b, *p.kernel, c.source, 1);
    EXPECT_TRUE(r.accepted) << c.description;
  }
  EXPECT_EQ(sizes, (std::set<std::string>{"CB=2048,", "CB=4096,"})) << why;
}

TEST(CascadeWorker, SoftmaxSecondPassLastChunkFirstPassesTheCascadeOnTheCapturedLongRows) {
  // The softmax Inductor wrote for 8192 rows of 50304 bf16 on the H200, scaled down to 4 rows: the
  // two-pass schedule whose second pass takes the chunks last to first (the last chunk partial,
  // 50304 = 12 x 4096 + 1152) passes G1-G3 through the interpreter on the bundle's own launch.
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/softmax_rows_50k_small");
  agents::KernelProfile p = rows_50k_profile(*b);
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  auto it = std::find_if(cands.begin(), cands.end(), [](const agents::Candidate& c) {
    return c.description.starts_with("row softmax two passes (the second last chunk first), lean arithmetic, CB=4096,");
  });
  ASSERT_NE(it, cands.end()) << why;
  EXPECT_NE(it->source.find("last = (r0_numel - 1) // CB * CB"), std::string::npos);
  expect_g1_to_g3_pass(*b, *p.kernel, it->source, 1);
}

TEST(CascadeWorker, SoftmaxPrefetchedChunksPassTheCascadeOnTheCapturedLongRows) {
  // The same captured 50304-wide bf16 rows with both prefetched forms (each chunk's successor loaded
  // before the chunk is reduced or written; the second pass forward and last chunk first): the
  // prefetch past either end of the row is masked off, and both pass G1-G3 through the interpreter.
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/tests/python/data/softmax_rows_50k_small");
  agents::KernelProfile p = rows_50k_profile(*b);
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  // bf16 rows: the lean arithmetic (ex2.ftz, one reciprocal per row), the output stored evict_first.
  for (const char* d : {"row softmax two passes, the next chunk prefetched, lean arithmetic, CB=4096,",
                        "row softmax two passes (the second last chunk first), the next chunk prefetched, lean "
                        "arithmetic, CB=4096,"}) {
    auto it = std::find_if(cands.begin(), cands.end(),
                           [&](const agents::Candidate& c) { return c.description.starts_with(d); });
    ASSERT_NE(it, cands.end()) << d << why;
    EXPECT_NE(it->source.find("(cn >= 0) & (cn < r0_numel) & live"), std::string::npos);
    EXPECT_EQ(it->source.find("tl.exp("), std::string::npos);
    EXPECT_NE(it->source.find("y = tl.math.exp2(x * 1.4426950408889634 - ml) * rs"), std::string::npos);
    EXPECT_NE(it->source.find("mask, eviction_policy='evict_first')"), std::string::npos);
    expect_g1_to_g3_pass(*b, *p.kernel, it->source, 1);
  }
}

TEST(CascadeWorker, SoftmaxRowsInTurnPassesTheCascadeOnTheCapturedSoftmax) {
  // The captured looped softmax (rows of 8192 fp32, scaled down to 512 rows) with the template's
  // rows-in-turn variant (each program takes XBLOCK rows in a pipelined loop): it runs on the
  // bundle's own launch through the interpreter and passes G1-G3.
  auto b = softmax_rows_8k();
  agents::KernelProfile p = softmax_rows_8k_profile(*b);
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  auto it = std::find_if(cands.begin(), cands.end(),
                         [](const agents::Candidate& c) { return c.description.starts_with("row softmax rows in turn"); });
  ASSERT_NE(it, cands.end()) << why;
  EXPECT_NE(it->source.find("for i in tl.range(0, XBLOCK, num_stages=2):"), std::string::npos);
  verify::CascadeResult r = expect_g1_to_g3_pass(*b, *p.kernel, it->source, 1);
  EXPECT_FALSE(verify::passed_on_rounding(r));
}

TEST(CascadeWorker, PoolRegisterWindowsPassTheCascadeOnTheCapturedAveragePool) {
  // The corpus avg_pool2d (3x3, stride 1, padding 1 on 4x16x32x32) with the register-window form:
  // each row read as aligned vectors plus the left and right neighbours'
  // (padding reaches both), split into columns, the window combined and joined back.
  using kopt::testing::tensor;
  using kopt::testing::value;
  auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/corpus/avg_pool2d");
  agents::KernelProfile p = first_kernel(*b, {tensor({4, 16, 32, 32}), tensor({4, 16, 32, 32}), value(4 * 16 * 32 * 32)});
  std::string why;
  auto cands = agents::templates::instantiate(p, &why);
  ASSERT_FALSE(cands.empty()) << why;
  EXPECT_TRUE(cands.front().description.starts_with("pool2d register windows")) << cands.front().description;
  for (int v : {4}) {
    auto it = std::find_if(cands.begin(), cands.end(), [&](const agents::Candidate& c) {
      return c.description.starts_with(fmt::format("pool2d register windows, {} columns per thread", v));
    });
    ASSERT_NE(it, cands.end()) << v;
    EXPECT_NE(it->source.find("lf = tl.load(ptr - " + std::to_string(v)), std::string::npos);
    EXPECT_NE(it->source.find("rt = tl.load(ptr + " + std::to_string(v)), std::string::npos);
    EXPECT_NE(it->source.find("tl.split("), std::string::npos);
    expect_g1_to_g3_pass(*b, *p.kernel, it->source, 1);
  }
}

TEST(CascadeWorker, TailMaskedKernelsPassTheCascadeOnCapturedBundles) {
  // A layer norm's normalize over 266847 elements (captured on the CPU) and a dilated 3-D max pool's 1260 outputs:
  // the unmasked blocks and the masked last block compute what Inductor's kernel does.
  for (auto [dir, kernel] : {std::pair{"tests/python/data/layer_norm3_split_cpu_capture",
                                       "triton_poi_fused_native_layer_norm_2"},
                             {"corpus/max_pool3d_dilated", "triton_poi_fused_max_pool3d_with_indices_0"}}) {
    SCOPED_TRACE(dir);
    auto b = ir::load_bundle(std::string(KOPT_SOURCE_DIR) + "/" + dir);
    const ir::Kernel* k = nullptr;
    for (const ir::Kernel& c : b->graphs[0]->kernels)
      if (c.name == kernel) k = &c;
    ASSERT_TRUE(k);
    std::string why;
    auto s = agents::rewrites::tail_mask(*k, &why);
    ASSERT_TRUE(s) << why;
    expect_g1_to_g3_pass(*b, *k, *s, 2);
  }
}
