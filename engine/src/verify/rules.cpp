#include "verify/rules.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "util/error.h"

namespace kopt::verify {

using nlohmann::json;

bool failed_reply(const worker::Reply& r) { return !r.ok; }

json reply_evidence(const worker::Reply& reply) {
  const json& r = reply.raw;
  json e = {{"error", r.value("error", "")}};
  if (r.contains("failure")) e["failure"] = r["failure"];
  if (r.contains("stderr_tail")) e["stderr_tail"] = r["stderr_tail"];
  if (r.value("fatal", false)) e["fatal"] = true;  // the worker said its CUDA context is broken
  // The supervisor replaces a worker that timed out, crashed or reported a broken CUDA context.
  e["worker_replaced"] = r.contains("failure") || r.value("fatal", false);
  return e;
}

double worst_rel(const json& comparison, const char* list) {
  double worst = 0;
  for (const auto& t : comparison.value(list, json::array())) worst = std::max(worst, t.value("max_rel", 0.0));
  return worst;
}

json beyond_scale(const json& comparison, const char* list) {
  json out = json::array();
  for (const auto& t : comparison.value(list, json::array()))
    if (t.value("ok", true) && !t.value("scaled_ok", true)) out.push_back(t);
  return out;
}

GateRecord failed_beyond_scale(json summary, json runs, json off_scale, const std::string& whose,
                               const char* list_key) {
  summary["match"] = false;
  summary["beyond_scale"] = true;
  runs.push_back(std::move(summary));
  return {"G2", GateStatus::failed,
          {{"runs", std::move(runs)},
           {"reason", fmt::format("outputs differ from {} by more than rtol of their own scale (within atol "
                                  "elementwise: values far below atol)", whose)},
           {list_key, std::move(off_scale)}}};
}

double rounding_floor(const std::string& dtype) {
  // Bits of precision, the implicit one included.
  static const std::map<std::string, int> bits = {{"float64", 53}, {"float32", 24}, {"float16", 11},
                                                  {"bfloat16", 8}};
  auto it = bits.find(dtype);
  return it == bits.end() ? 0.0 : 2 * std::ldexp(1.0, 1 - it->second);
}

worker::RunModuleReply model_run(worker::Supervisor& sup, worker::RunModuleRequest req, const CascadeOptions& o,
                                 bool fp64_only) {
  if (!fp64_only) {
    req.fp64 = false;
    worker::RunModuleReply r = worker::run_module(sup, req, o.timeout);
    if (failed_reply(r) || r.within_tolerance()) return r;
  }
  req.fp64 = true;
  return worker::run_module(sup, req, o.timeout);
}

Verdict model_verdict(const worker::RunModuleReply& r, const CascadeOptions& o, bool fp64_only) {
  const bool within = r.within_tolerance() && !fp64_only;
  KOPT_INTERNAL_ASSERT(within || r.candidate_vs_fp64.is_object(), "model_verdict: a run_module reply without fp64");
  json ev = {{"vs_baseline_max_rel", worst_rel(r.vs_baseline, "outputs")},
             {"fp64_slack", o.fp64_slack}, {"tolerances", o.tol.to_json()}};
  if (r.candidate_vs_fp64.is_object()) {
    ev["candidate_vs_fp64_max_rel"] = worst_rel(r.candidate_vs_fp64, "outputs");
    ev["baseline_vs_fp64_max_rel"] = worst_rel(r.baseline_vs_fp64, "outputs");
  }
  // The model's own run-to-run spread (the baseline against a second run of itself; zero when it is
  // deterministic): the float64 rule below allows for it.
  double spread = 0.0;
  if (r.baseline_self.is_object()) ev["baseline_self_max_rel"] = spread = worst_rel(r.baseline_self, "outputs");
  if (within) {
    ev["rule"] = "within tolerance of the baseline";
    return {true, ev};
  }
  if (r.vs_baseline.contains("reason")) ev["reason"] = r.vs_baseline["reason"];  // e.g. output count
  // Outside tolerance of the baseline: pass only if no less accurate than the baseline against float64,
  // with as many outputs and the same NaN/Inf positions.
  const json cand_outputs = r.candidate_vs_fp64.value("outputs", json::array());
  bool same_outputs = cand_outputs.size() == r.baseline_vs_fp64.value("outputs", json::array()).size();
  for (const auto& t : cand_outputs)
    same_outputs = same_outputs && t.value("nan_positions_match", true) && t.value("inf_positions_match", true);
  // The baseline's own error against float64 moves by up to its run-to-run spread from one run to the
  // next (a split scan's or an atomic reduction's order), so a candidate inside that band is as
  // accurate as the baseline is on some run of its own.
  // Errors are the largest over an output relative to its largest magnitude: where both are a few units in
  // the last place there, a reordered sum's is as likely above the baseline's as below it (a mean over 4001
  // values, H200: 2.8e-07 against the baseline's 1.5e-07, rejected under the slack alone). G2 has bounded the
  // candidate's distance from the baseline before this rule is asked.
  double floor = 0;
  for (const auto& t : cand_outputs) floor = std::max(floor, rounding_floor(t.value("got_dtype", "")));
  double cand = ev["candidate_vs_fp64_max_rel"], base = ev["baseline_vs_fp64_max_rel"];
  double allowed = std::max({base * o.fp64_slack, base + spread, base + floor});
  ev["allowed_max_rel"] = allowed;
  ev["rounding_floor"] = floor;
  ev["rule"] = std::string(fp64_only ? "float64 rule (required: a kernel passed G2 on rounding only)"
                                     : "float64 fallback") +
               ": candidate error <= max(baseline error * slack, baseline error + the baseline's run-to-run spread, "
               "baseline error + two units in the last place of the output's dtype)";
  return {same_outputs && cand <= allowed, ev};
}

Verdict timing_verdict(const worker::Timing& base, const worker::Timing& cand, double gamma, const std::string& name) {
  // Noise cannot pass: the candidate's slow end must beat the baseline's fast end by gamma.
  bool faster = cand.p80_ms <= base.p20_ms / gamma;
  // Work hidden on another stream shows as device-synchronized time the events did not see.
  double hidden = (cand.synced_median_ms - cand.median_ms) - (base.synced_median_ms - base.median_ms);
  bool honest = hidden <= kHiddenSlackMs + kHiddenSlackOfMedian * base.median_ms;
  json ev = {{"baseline", base.raw}, {name, cand.raw}, {"gamma", gamma},
             {"speedup", base.median_ms / cand.median_ms},
             {"rule", name + " p80 <= baseline p20 / gamma"}, {"hidden_ms", hidden}};
  if (!honest) ev["reason"] = "the device-synchronized time exceeds the event time: work outside the timed stream";
  return {faster && honest, ev};
}

}  // namespace kopt::verify
