#include "verify/end_to_end.h"

#include <fmt/format.h>

#include "util/error.h"
#include "verify/rules.h"
#include "worker/client.h"

namespace kopt::verify {

using nlohmann::json;

GateRecord end_to_end(worker::Supervisor& sup, const ir::Bundle& b, const std::vector<std::string>& stitched_sources,
                      const CascadeOptions& o) {
  KOPT_INTERNAL_ASSERT(stitched_sources.size() == b.graphs.size(),
                       fmt::format("end_to_end: {} module(s) for {} graph(s)", stitched_sources.size(), b.graphs.size()));
  worker::Reply loaded = worker::load_bundle(sup, b.dir, o.load_timeout);
  if (failed_reply(loaded)) return {"E2E", GateStatus::failed, {{"correctness", reply_evidence(loaded)},
                                                      {"reason", "the baseline did not load"}}};

  worker::RunModuleReply r =
      model_run(sup, {.bundle = b.dir, .sources = stitched_sources, .tolerances = o.tol.to_json()}, o, o.fp64_rule_only);
  if (failed_reply(r))
    return {"E2E", GateStatus::failed, {{"correctness", reply_evidence(r)}, {"reason", "the stitched model did not run"}}};
  Verdict correct = model_verdict(r, o, o.fp64_rule_only);
  json ev = {{"correctness", correct.evidence}};
  if (!correct.passed) {
    ev["reason"] = "the stitched model's outputs are wrong";
    return {"E2E", GateStatus::failed, ev};
  }

  worker::TimedReply t = worker::time_module(sup, {.bundle = b.dir, .sources = stitched_sources, .reps = o.reps}, o.timeout);
  if (failed_reply(t)) {
    ev["timing"] = reply_evidence(t);
    ev["reason"] = "timing the stitched model failed";
    return {"E2E", GateStatus::failed, ev};
  }
  if (!t.measured) {
    ev["reason"] = t.reason.value_or("not measured");
    return {"E2E", GateStatus::not_measured, ev};
  }
  Verdict fast = timing_verdict(t.baseline, t.candidate, o.gamma, "optimized");
  ev.update(fast.evidence);
  if (!fast.passed && !ev.contains("reason"))
    ev["reason"] = fmt::format("the stitched model is not faster by gamma {} beyond noise (median speedup {:.3f}x)",
                               o.gamma, ev.value("speedup", 0.0));
  return {"E2E", fast.passed ? GateStatus::passed : GateStatus::failed, ev};
}

}  // namespace kopt::verify
