#include "verify/cascade.h"

#include <chrono>
#include <optional>
#include <string_view>

#include <xxhash.h>

#include <fmt/format.h>

#include "artifact/pin_config.h"
#include "stitch/stitch.h"
#include "verify/compiles.h"
#include "verify/g2_runs.h"
#include "verify/order_probe.h"
#include "verify/outputs.h"
#include "verify/rules.h"
#include "verify/small_config.h"
#include "verify/static/g1.h"
#include "worker/client.h"

namespace kopt::verify {

using nlohmann::json;

std::string source_hash(const std::string& source) {
  return fmt::format("{:016x}", XXH3_64bits(source.data(), source.size()));
}

json Tolerances::to_json() const {
  json fp32 = {{"atol", atol_fp32}, {"rtol", rtol_fp32}}, half = {{"atol", atol_half}, {"rtol", rtol_half}};
  return {{"float32", fp32}, {"float64", fp32}, {"float16", half}, {"bfloat16", half}};
}

namespace {

json findings_json(const std::vector<Finding>& fs) {
  json out = json::array();
  for (const Finding& f : fs) out.push_back({{"check", f.check}, {"passed", f.passed}, {"message", f.message}});
  return out;
}

// The static checks, then (only if they all pass: loading runs the candidate's module code) the compile.
GateRecord g1(worker::Supervisor& sup, const std::string& bundle, size_t graph, const ir::Kernel& k,
              const std::string& source, const CascadeOptions& o) {
  G1Result r = run_g1(k, source);
  if (r.passed) {
    r.findings.push_back(check_compiles(sup, bundle, graph, k, source, o));
    r.passed = r.findings.back().passed;
  }
  return {"G1", r.passed ? GateStatus::passed : GateStatus::failed, {{"findings", findings_json(r.findings)}}};
}

// The original's own source under each probe config on the run's inputs (order_probe.h): the first whose
// differences from the original cover the candidate's (`candidate`, its comparison), as evidence; nothing
// when none does.
std::optional<json> order_probe(worker::Supervisor& sup, const worker::RunKernelRequest& run, const ir::Kernel& k,
                                const CascadeOptions& o, const json& candidate) {
  for (const json& cfg : order_probes(k, run.source)) {
    if (std::chrono::steady_clock::now() >= o.stop_at) return std::nullopt;  // the job's budget is spent
    worker::RunKernelRequest req = run;
    req.source = k.source;
    req.config = cfg;
    req.repeat = false;
    worker::RunKernelReply r = worker::run_kernel(sup, req, o.timeout);
    if (failed_reply(r)) return std::nullopt;
    if (!r.match && within_order_sensitivity(candidate, r.comparison))
      return json{{"original_config", ir::describe_config(cfg)},
                  {"original_max_rel", worst_rel(r.comparison, "args")},
                  {"rule", "the original's own source under this config differs from it as much on these inputs "
                           "(the same NaN/Inf positions differing, finite differences at least half the "
                           "candidate's): the differences are the grouping's; G3's float64 rule decides"}};
  }
  return std::nullopt;
}

GateRecord g2(worker::Supervisor& sup, const ir::Bundle& b, size_t graph, const ir::Kernel& k,
              const std::string& source, const CascadeOptions& o) {
  const std::string& bundle = b.dir;
  worker::RunKernelRequest base{.at = {bundle, graph, k.name}, .source = source, .poison = pure_output_args(k),
                                .tolerances = o.tol.to_json()};
  // A workspace the host allocates for this launch alone and frees after it holds nothing anyone reads.
  base.scratch = scratch_args(*b.graphs.at(graph), k);
  json runs = json::array();
  bool rounding = false;  // some run differed from the original at rounding level only
  // The reference stays the original at its own config (the ground truth, and no second original run):
  // a different block size changes only the summation order, which the rounding_only rule absorbs.
  std::optional<json> small = small_config(k, source);
  // The real recorded inputs first (run twice: nondeterminism beyond rounding fails), then fresh seeds.
  const std::vector<G2Run> plan = g2_runs(o.seeds, small.has_value());
  const size_t total = plan.size() * k.launch_count;
  size_t done = 0;
  double longest = 0;  // seconds of the longest run so far
  for (const G2Run& run : plan) {
    for (size_t launch = 0; launch < k.launch_count; ++launch) {
      // The next run is taken to last as long as the longest so far (a fresh seed costs what the last one did).
      if (std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(longest)) >= o.stop_at)
        return {"G2", GateStatus::failed,
                {{"runs", runs}, {"runs_planned", total}, {"cut_short", true},
                 {"reason", "not finished: the job's budget was spent"}}};
      worker::RunKernelRequest req = base;
      req.launch = launch;
      req.poison_fill = run.fill;
      if (run.seed >= 0) req.seed = run.seed;
      if (run.seed >= 0) req.inputs = run.inputs;
      req.repeat = run.repeat;
      if (run.small) req.config = *small;
      auto t0 = std::chrono::steady_clock::now();
      worker::RunKernelReply r = worker::run_kernel(sup, req, o.timeout);
      std::string label = run.seed < 0 ? std::string("recorded") : fmt::format("seed {}", run.seed);
      if (run.seed >= 0 && std::string_view(run.inputs) != "matched") label += fmt::format(" ({})", run.inputs);
      json summary = {{"launch", launch}, {"inputs", label}, {"poison_fill", run.fill}};
      if (run.small) summary["config"] = "small " + ir::describe_config(*small);
      // Each run's seconds: what each kind of draw and the small config add to G2 (benchmarks/RESULTS.md).
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      summary["seconds"] = seconds;
      longest = std::max(longest, seconds);
      if (o.progress)
        o.progress(fmt::format("G2 run {}/{} {}{}: {} ({:.1f} s)", ++done, total, label, run.small ? " small config" : "",
                               failed_reply(r) ? "did not run" : r.match ? "match" : r.rounding_only ? "rounding only"
                                                                                                   : "differs",
                               seconds));
      if (failed_reply(r)) {
        summary.update(reply_evidence(r));
        runs.push_back(summary);
        return {"G2", GateStatus::failed, {{"runs", runs}, {"reason", "the candidate did not run"}}};
      }
      summary["max_rel"] = worst_rel(r.comparison, "args");
      // On ordinary inputs an elementwise match must also hold within rtol of each output's scale (rules.h).
      json off_scale = ordinary_inputs(run) ? beyond_scale(r.comparison, "args") : json::array();
      if (r.match && !off_scale.empty())
        return failed_beyond_scale(summary, runs, off_scale, "the original kernel's", "mismatched_args");
      summary["match"] = r.match;
      if (r.deterministic) summary["deterministic"] = *r.deterministic;
      if (!r.match && r.rounding_only) {
        // Every difference is at most a tenth of the tolerance relative to the output's scale (a changed
        // summation order): not a match, not a failure — G3 must show float64 accuracy (docs/gates.md).
        summary["rounding_only"] = true;
        runs.push_back(summary);
        // The small config's other block sizes reorder sums by themselves; G3 judges the candidate at
        // its own config, so only the candidate's own-config runs call for its float64 comparison.
        rounding = rounding || !run.small;
        continue;
      }
      if (!r.match && probe_worthy(r.comparison, run.fill, r.deterministic.value_or(true))) {
        // Differences the original's own code, blocked otherwise, shows too are its grouping's, not the
        // candidate's (order_probe.h). NaN/Inf positions only after a garbage fill: an element left
        // unwritten then shows as a finite difference, never as a NaN position.
        if (auto probe = order_probe(sup, req, k, o, r.comparison)) {
          summary["order_sensitive"] = *probe;
          runs.push_back(summary);
          rounding = rounding || !run.small;
          continue;
        }
      }
      runs.push_back(summary);
      if (!r.match) {
        json bad = json::array();
        for (const auto& a : r.comparison.value("args", json::array()))
          if (!a.value("ok", true)) bad.push_back(a);
        std::string why = r.deterministic.value_or(true) ? "outputs differ from the original kernel's"
                                                         : "two runs on the same inputs differ";
        return {"G2", GateStatus::failed, {{"runs", runs}, {"reason", why}, {"mismatched_args", bad}}};
      }
    }
  }
  json ev = {{"runs", runs}, {"tolerances", o.tol.to_json()}};
  if (rounding) {
    ev["needs_fp64"] = true;
    ev["rule"] = "rounding-level differences only (<= rtol/10 of each output's scale, NaN/Inf positions matching, "
                 "or differing no more than the original's own code under another config does); passes on "
                 "condition that G3 finds it no less accurate than the baseline against float64";
  }
  return {"G2", GateStatus::passed, ev};
}

GateRecord g3(worker::Supervisor& sup, const ir::Bundle& b, size_t graph, const ir::Kernel& k,
              const std::string& source, const CascadeOptions& o, bool fp64_only) {
  std::string stitched = stitch::stitch(*b.graphs.at(graph), {{k.name, source, "candidate"}}, o.pins);
  worker::RunModuleReply r = model_run(
      sup, {.bundle = b.dir, .source = stitched, .graph = graph, .tolerances = o.tol.to_json()}, o, fp64_only);
  if (failed_reply(r)) return {"G3", GateStatus::failed, reply_evidence(r)};
  Verdict v = model_verdict(r, o, fp64_only);
  return {"G3", v.passed ? GateStatus::passed : GateStatus::failed, v.evidence};
}

GateRecord g4(worker::Supervisor& sup, const std::string& bundle, size_t graph, const ir::Kernel& k,
              const std::string& source, const CascadeOptions& o) {
  // Pure outputs are poisoned before every timed repetition (outside the timed region), so a
  // candidate cannot reuse what it left in them on the previous call.
  worker::TimedReply r = worker::time_kernel(
      sup, {.at = {bundle, graph, k.name}, .source = source, .reps = o.reps, .poison = pure_output_args(k)}, o.timeout);
  if (failed_reply(r)) return {"G4", GateStatus::failed, reply_evidence(r)};
  if (!r.measured) return {"G4", GateStatus::not_measured, {{"reason", r.reason.value_or("")}}};
  Verdict v = timing_verdict(r.baseline, r.candidate, o.gamma, "candidate");
  return {"G4", v.passed ? GateStatus::passed : GateStatus::failed, v.evidence};
}

}  // namespace

bool cut_short(const CascadeResult& r) {
  return !r.gates.empty() && r.gates.back().evidence.is_object() && r.gates.back().evidence.value("cut_short", false);
}

bool passed_on_rounding(const CascadeResult& r) {
  for (const GateRecord& g : r.gates)
    if (g.gate == "G2" && g.status == GateStatus::passed && g.evidence.is_object()) return g.evidence.value("needs_fp64", false);
  return false;
}

CascadeResult run_cascade(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph, const ir::Kernel& kernel,
                          const std::string& candidate_source, const CascadeOptions& o) {
  CascadeResult res;
  res.kernel = kernel.name;
  res.candidate_hash = source_hash(candidate_source);
  // Each gate's record carries the seconds it took: a search that overruns its budget shows which gate cost it.
  auto stop_after = [&](auto&& gate) {
    auto t0 = std::chrono::steady_clock::now();
    GateRecord g = gate();
    if (g.evidence.is_object())
      g.evidence["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool ok = lets_through(g.status);
    if (o.progress && g.evidence.is_object())
      o.progress(fmt::format("{} {} ({:.1f} s)", g.gate,
                             g.evidence.value("cut_short", false) ? "cut short: the budget" : to_string(g.status),
                             g.evidence.value("seconds", 0.0)));
    res.gates.push_back(std::move(g));
    return !ok;
  };
  if (stop_after([&] { return g1(sup, bundle.dir, graph, kernel, candidate_source, o); })) return res;
  if (stop_after([&] { return g2(sup, bundle, graph, kernel, candidate_source, o); })) return res;
  if (stop_after([&] { return g3(sup, bundle, graph, kernel, candidate_source, o, passed_on_rounding(res)); }))
    return res;
  if (stop_after([&] { return g4(sup, bundle.dir, graph, kernel, candidate_source, o); })) return res;
  // Every gate passed. In CPU mode G4 is "not measured": the candidate is accepted as correct,
  // and no performance is claimed (performance_measured stays false).
  res.accepted = true;
  res.performance_measured = res.gates.back().status == GateStatus::passed;
  return res;
}

}  // namespace kopt::verify
