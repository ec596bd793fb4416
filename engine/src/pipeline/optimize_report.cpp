#include "pipeline/optimize_report.h"

#include <set>

#include <fmt/format.h>

#include "profile/access.h"
#include "profile/regions.h"
#include "worker/memory.h"

namespace kopt::pipeline {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// `fused`: a chosen region's fused kernel replaces every launch of this kernel (search/regions.h).
json kernel_json(const search::KernelOutcome& k, bool measured, bool fused) {
  const agents::KernelProfile& p = k.profile;
  json cands = json::array();
  for (const search::CandidateRecord& c : k.candidates) {
    json cj = search::candidate_json(c);
    for (json& g : cj["gates"]) g["summary"] = gate_summary(g);
    cands.push_back(cj);
  }
  std::optional<double> after;
  if (k.chosen && measured && p.time_ms && k.speedup) after = *p.time_ms / *k.speedup;
  std::string note = k.note;
  if (after && p.floor_ms && *after > 1.3 * *p.floor_ms && note.empty()) note = above_floor_note(p, *after);
  json j = {{"name", p.kernel->name},
          {"graph", p.graph},
          {"kind", p.kernel->kind},
          {"family", p.family},
          {"aten_ops", p.kernel->aten_ops},
          {"bottleneck", p.bottleneck},
          {"bytes", p.cost.bytes()},
          {"flops", p.cost.flops_known ? json(p.cost.flops) : json(nullptr)},
          {"floor_ms", opt(p.floor_ms)},
          {"baseline_ms", measured ? opt(p.time_ms) : json(nullptr)},
          {"optimized_ms", opt(after)},
          {"calls_per_run", p.calls_per_run},
          {"accepted", k.chosen.has_value()},
          {"fused", fused},
          {"chosen", k.chosen ? json(k.candidates[*k.chosen].candidate.id) : json(nullptr)},
          {"speedup", opt(k.speedup)},
          {"strategies", k.plan.strategies},
          {"declined", k.plan.declined},
          {"search_seconds", k.seconds},
          {"note", note},
          {"candidates", cands}};
  if (!p.explanation.empty()) j["llm_explanation"] = p.explanation;  // LLM profiler (docs/llm.md)
  if (!k.plan.ideas.empty()) j["llm_ideas"] = k.plan.ideas;          // LLM planner
  return j;
}

// The config a Helion kernel file's kernel was captured with (meta.json's helion.kernels[], docs/inputs.md), for
// the kernel Inductor named `triton_helion_<kernel>_<n>`; null for every other kernel.
json helion_config(const json& meta, const std::string& name) {
  const json& h = meta.contains("helion") && meta["helion"].is_object() ? meta["helion"] : json::object();
  for (const json& k : h.value("kernels", json::array())) {
    if (!k.is_object() || !k.contains("config") || !k["config"].is_object()) continue;
    std::string prefix = "triton_helion_" + k.value("kernel", "") + "_";
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
        name.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return k["config"];
  }
  return nullptr;
}

std::string g3(double v) { return fmt::format("{:.3g}", v); }

// A G2 mismatch's numbers: the first differing argument, its largest error and the bound it broke.
std::string mismatch_numbers(const json& e) {
  for (const json& a : e.value("mismatched_args", json::array())) {
    if (!a.is_object()) continue;
    std::string arg = fmt::format("arg {}", a.value("arg", -1));
    if (a.contains("reason") && a["reason"].is_string()) return arg + ": " + a["reason"].get<std::string>();
    bool floating = a.contains("max_abs") && a["max_abs"].is_number();
    if (!floating && a.contains("mismatched")) return fmt::format("{}: {} elements differ", arg, a["mismatched"].dump());
    if (!a.value("nan_positions_match", true)) return arg + ": NaN positions differ";
    if (!a.value("inf_positions_match", true)) return arg + ": Inf positions differ";
    if (floating) {
      std::string count = a.contains("mismatched") ? fmt::format(", {} elements outside it", a["mismatched"].dump()) : "";
      return fmt::format("{}: max abs err {} (output scale {}; allowed atol {} + rtol {} x |value|{})", arg,
                         g3(a["max_abs"].get<double>()), g3(a.value("scale", 0.0)), g3(a.value("atol", 0.0)),
                         g3(a.value("rtol", 0.0)), count);
    }
  }
  return "";
}

// A G4 timing's numbers: the speedup, and the candidate's slow end against the baseline's fast end over gamma.
std::string timing_numbers(const json& e) {
  const json* base = e.contains("baseline") && e["baseline"].is_object() ? &e["baseline"] : nullptr;
  const json* cand = nullptr;
  for (auto it = e.begin(); it != e.end(); ++it)
    if (it.key() != "baseline" && it.value().is_object() && it.value().contains("p80_ms")) cand = &it.value();
  std::string out = fmt::format("{:.3f}x", e["speedup"].get<double>());
  if (base && cand && base->contains("p20_ms") && e.contains("gamma"))
    out += fmt::format(": p80 {} ms vs baseline p20 {} ms / {} = {} ms", g3(cand->value("p80_ms", 0.0)),
                       g3(base->value("p20_ms", 0.0)), g3(e.value("gamma", 1.0)),
                       g3(base->value("p20_ms", 0.0) / e.value("gamma", 1.0)));
  return out;
}

}  // namespace

// One line per gate for the report: the numbers the gate judged (its rule stays in `evidence.rule`, and the
// full evidence in report.json).
std::string gate_summary(const json& g) {
  const json& e = g.value("evidence", json::object());
  std::string reason = e.contains("reason") && e["reason"].is_string() ? e["reason"].get<std::string>() : "";
  if (e.contains("error")) return e["error"].get<std::string>().substr(0, 200);
  if (e.contains("candidate_vs_fp64_max_rel") && e["candidate_vs_fp64_max_rel"].is_number()) {  // G3
    std::string out =
        e.contains("allowed_max_rel")
            ? fmt::format("error vs float64 {}, allowed {} (the baseline's {})", g3(e["candidate_vs_fp64_max_rel"].get<double>()),
                          g3(e["allowed_max_rel"].get<double>()), g3(e.value("baseline_vs_fp64_max_rel", 0.0)))
            : fmt::format("max rel difference from the baseline {}", g3(e.value("vs_baseline_max_rel", 0.0)));
    return reason.empty() ? out : out + "; " + reason.substr(0, 200);
  }
  if (e.contains("speedup") && e["speedup"].is_number()) {  // G4
    std::string out = timing_numbers(e);
    return reason.empty() ? out : out + "; " + reason.substr(0, 200);
  }
  if (!reason.empty()) {
    std::string numbers = mismatch_numbers(e);  // G2
    return (numbers.empty() ? reason : reason + ": " + numbers).substr(0, 300);
  }
  if (e.contains("findings"))
    for (const json& f : e["findings"])
      if (!f.value("passed", true)) return f.value("message", "");
  if (e.contains("rule") && e["rule"].is_string()) return e["rule"].get<std::string>();
  return "";
}

std::string above_floor_note(const agents::KernelProfile& p, double optimized_ms) {
  double x = p.floor_ms ? optimized_ms / *p.floor_ms : 0;
  if (profile::gathers(*p.kernel))
    return fmt::format("accepted at {:.2f}x its floor: it gathers through indices it loads, and the floor counts the "
                       "gathered table once, which only a table that stays in L2 reaches",
                       x);
  return fmt::format("accepted at {:.2f}x its floor: the built-in agents found no faster safe variant in the budget", x);
}

// Each graph's regions (profile/regions.h) with their one-pass floor beside the sum of their kernels'
// floors: how far fusing a region's kernels could go below what optimizing each alone can reach.
static json regions_json(const ReportInputs& in) {
  json out = json::array();
  double bw = in.ceilings.is_object() ? in.ceilings.value("copy_bytes_per_s", 0.0) : 0.0;
  const json graphs = in.bundle.meta.value("graphs", json::array());
  for (size_t g = 0; g < in.bundle.graphs.size(); ++g) {
    const ir::Artifact& a = *in.bundle.graphs[g];
    const ir::Function* f = a.entry_function();
    if (!f) continue;
    json args = g < graphs.size() && graphs[g].is_object() ? graphs[g].value("args", json()) : json();
    auto rs = profile::regions(a, *f, args);
    json rj = profile::to_json(a, *f, rs);
    for (size_t i = 0; i < rs.size(); ++i) {
      rj[i]["graph"] = g, rj[i]["index"] = i;  // as the job's lines name it: region i of graph g
      rj[i]["floor_ms"] = bw > 0 ? json(rs[i].floor_bytes() / bw * 1e3) : json(nullptr);
      // The kernels' own floors, each counted once however often the region launches it.
      std::set<std::string> seen;
      double sum = 0;
      bool known = true;
      for (const json& name : rj[i]["kernels"]) {
        if (!seen.insert(name.get<std::string>()).second) continue;
        const search::KernelOutcome* k = nullptr;
        for (const auto& o : in.outcomes)
          if (o.profile.graph == g && o.profile.kernel && o.profile.kernel->name == name.get<std::string>()) k = &o;
        if (!k || !k->profile.floor_ms) known = false;
        else sum += *k->profile.floor_ms;
      }
      rj[i]["kernel_floors_ms"] = known && bw > 0 ? json(sum) : json(nullptr);
      for (const search::RegionOutcome& r : in.regions)
        if (r.graph == g && r.index == i) {
          json fusion = search::region_json(r);
          for (json& c : fusion["candidates"])
            for (json& gate : c["gates"]) gate["summary"] = gate_summary(gate);
          rj[i]["fusion"] = fusion;
        }
      out.push_back(rj[i]);
    }
  }
  return out;
}

json build_report(const ReportInputs& in) {
  bool measured = in.options.device != "cpu";
  json kernels = json::array();
  size_t accepted = 0, candidates = 0, fused = 0;
  for (const search::RegionOutcome& r : in.regions) fused += r.chosen.has_value() && in.changed;
  json rejected_at = {{"G1", 0}, {"G2", 0}, {"G3", 0}, {"G4", 0}};
  for (const search::KernelOutcome& k : in.outcomes) {
    bool fused_away = false;
    for (const search::RegionOutcome& r : in.regions)
      for (const auto& saved : r.replaced) fused_away |= in.changed && &in.outcomes[saved.outcome] == &k;
    kernels.push_back(kernel_json(k, measured, fused_away));
    if (json h = helion_config(in.bundle.meta, kernels.back().value("name", "")); !h.is_null())
      kernels.back()["helion_config"] = h;
    accepted += k.chosen.has_value() && in.changed;
    for (const search::CandidateRecord& c : k.candidates) {
      ++candidates;
      if (c.result && !c.result->accepted && !c.result->gates.empty()) {
        std::string g = c.result->gates.back().gate;
        rejected_at[g] = rejected_at.value(g, 0) + 1;
      }
    }
  }
  // The module's times: the end-to-end gate measured baseline and optimized through the same call path.
  json module = {{"baseline_ms", nullptr}, {"optimized_ms", nullptr}, {"speedup", nullptr},
                 {"triton_ms", nullptr},   {"vendor_ms", nullptr},    {"changed", in.changed},
                 {"end_to_end", nullptr}};
  if (measured && in.profile.is_object()) {
    module["triton_ms"] = in.profile.value("triton_ms", 0.0);
    module["vendor_ms"] = in.profile.value("vendor_ms", 0.0);
    if (in.profile.contains("module")) module["baseline_ms"] = in.profile["module"].value("median_ms", 0.0);
    if (!in.changed) module["optimized_ms"] = module["baseline_ms"], module["speedup"] = 1.0;
  }
  if (in.e2e) {
    module["end_to_end"] = {{"gate", in.e2e->gate}, {"status", in.e2e->status}, {"evidence", in.e2e->evidence}};
    const json& e = in.e2e->evidence;
    if (in.changed && e.contains("baseline") && e["baseline"].is_object() && e.contains("optimized")) {
      module["baseline_ms"] = e["baseline"].value("median_ms", 0.0);
      module["optimized_ms"] = e["optimized"].value("median_ms", 0.0);
      if (e.contains("speedup")) module["speedup"] = e["speedup"];
    }
  }
  json vendor = json::array();
  if (in.profile.is_object())
    for (const json& k : in.profile.value("kernels", json::array()))
      if (!k.value("triton", true)) vendor.push_back({{"name", k.value("name", "")}, {"ms_per_run", k.value("ms_per_run", 0.0)}});
  json ceilings = nullptr;
  if (in.ceilings.is_object()) {
    const json rates = in.ceilings.value("matmul_flops_per_s", json::object());
    ceilings = {{"copy_tbps", in.ceilings.value("copy_bytes_per_s", 0.0) / 1e12},
                {"fp32_tflops", rates.value("fp32", 0.0) / 1e12},
                {"bf16_tflops", rates.value("bf16", 0.0) / 1e12},
                {"fp16_tflops", rates.value("fp16", 0.0) / 1e12}};
    // tf32: absent from ceilings cached before the worker measured it.
    if (rates.contains("tf32")) ceilings["tf32_tflops"] = rates["tf32"].get<double>() / 1e12;
  }
  std::string headline_note = in.fallback_note;
  if (headline_note.empty() && !in.changed)
    headline_note = "no kernel was replaced: every kernel keeps the compiler's version (see each kernel's note)";
  return {{"format", "kernelopt-report"},
          {"format_version", 1},
          {"bundle", in.bundle_dir},
          {"problem", in.bundle.meta.value("problem_name", in.bundle.meta.value("problem", ""))},
          {"out_dir", in.out.string()},
          {"device", in.options.device},
          {"gpu", in.hello.contains("gpu") && in.hello["gpu"].is_object() ? json(in.hello["gpu"].value("name", "")) : json(nullptr)},
          {"versions", in.hello.value("versions", json::object())},
          {"performance_measured", measured},
          {"agents", in.options.agents},
          {"budget_s", in.options.budget_s},
          {"elapsed_s", in.elapsed_s},
          {"stages", in.stages},
          {"ceilings", ceilings},
          // null: the baseline did not run (the budget, an interrupt)
          {"baseline_vs_eager", in.baseline.is_object() ? json{{"match", in.baseline.value("match", false)},
                                                              {"eager_device", in.baseline.value("eager_device", json())}}
                                                       : json(nullptr)},
          {"module", module},
          {"memory", in.memory.is_object() ? in.memory : worker::memory_summary({}, std::nullopt)},
          {"note", headline_note},
          {"kernels", kernels},
          {"regions", regions_json(in)},
          {"vendor", vendor},
          {"summary", {{"kernels", in.outcomes.size()}, {"accepted", accepted}, {"candidates", candidates},
                       {"rejected_at", rejected_at}, {"regions_fused", fused}}}};
}

}  // namespace kopt::pipeline
