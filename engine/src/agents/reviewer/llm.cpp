#include "agents/reviewer/llm.h"

#include <fmt/format.h>

#include "agents/llm/common.h"

namespace kopt::agents {

std::optional<Candidate> LlmReviewer::repair(const KernelProfile& k, const Candidate& failed,
                                             const verify::CascadeResult& result) {
  if (builtin_)
    if (auto fix = builtin_->repair(k, failed, result)) return fix;
  if (result.gates.empty() || result.accepted) return std::nullopt;
  const verify::GateRecord& last = result.gates.back();
  if (last.gate == "G4" || last.status != verify::GateStatus::failed) return std::nullopt;
  std::string evidence = last.evidence.dump(2);
  if (evidence.size() > 4000) evidence = evidence.substr(0, 4000) + "\n... (cut)";
  auto [i, reply] = s_->ask("reviewer", k.kernel->name,
                            {{"facts", llm_support::kernel_facts(k)},
                             {"candidate_origin", failed.origin},
                             {"candidate_description", failed.description},
                             {"candidate_source", failed.source},
                             {"gate", last.gate},
                             {"evidence", evidence},
                             {"entry", k.kernel->entry},
                             {"params", llm_support::params(k)}});
  if (!reply.ok) return std::nullopt;
  auto src = llm_support::candidate_source(k, reply.text);
  if (!src.value) {
    s_->settle(i, "unparsable", src.reason);
    return std::nullopt;
  }
  Candidate c;
  c.origin = "llm:review";
  c.description = fmt::format("LLM repair of {} (failed {})", failed.id, last.gate);
  c.source = *src.value;
  c.parent = failed.id;
  s_->settle(i, "proposed", "", {verify::source_hash(c.source)});
  return c;
}

}  // namespace kopt::agents
