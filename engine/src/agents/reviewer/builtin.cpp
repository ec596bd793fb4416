// Built-in reviewer: a config candidate that did not compile or run (too many
// registers or too much shared memory for its blocks and stages) is repaired
// by the next smaller config: fewer stages first, then the largest block
// halved. A candidate that ran and computed something else is not repaired: a
// launch config cannot make a kernel wrong, so the evidence points elsewhere.
#include "agents/reviewer/builtin.h"

#include "agents/coder/builtin.h"

namespace kopt::agents {

std::optional<Candidate> BuiltinReviewer::repair(const KernelProfile& k, const Candidate& failed,
                                                 const verify::CascadeResult& result) {
  if (failed.config.is_null() || result.gates.empty()) return std::nullopt;
  const verify::GateRecord& last = result.gates.back();
  bool did_not_run = (last.gate == "G1" && last.evidence.dump().find("\"compiles\"") != std::string::npos) ||
                     (last.gate == "G2" && last.evidence.value("reason", "") == "the candidate did not run");
  if (!did_not_run) return std::nullopt;
  nlohmann::json c = failed.config;
  if (c.value("num_stages", 1) > 1) {
    c["num_stages"] = c["num_stages"].get<int>() - 1;
  } else {
    std::string largest;
    for (const char* b : {"XBLOCK", "YBLOCK", "R0_BLOCK"})
      if (c.contains(b) && c[b].get<int64_t>() > 1 && (largest.empty() || c[b] > c[largest])) largest = b;
    if (largest.empty()) return std::nullopt;
    c[largest] = c[largest].get<int64_t>() / 2;
  }
  auto out = config_candidates(k, {c}, "review", failed.id, failed.own_config_space ? &failed : nullptr);
  if (out.empty()) return std::nullopt;
  out.front().description += " (repair of " + failed.id + ")";
  return out.front();
}

}  // namespace kopt::agents
