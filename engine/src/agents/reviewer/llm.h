#pragma once

#include <memory>

#include "agents/agent.h"
#include "llm/session.h"

namespace kopt::agents {

// LLM reviewer: repairs a candidate that failed G1, G2 or G3 from the gate's evidence (a
// G4 rejection is not a bug to repair). In hybrid mode the built-in reviewer goes first —
// its repairs of configs that did not run are cheap and certain — and the LLM repairs the
// rest, candidates of either origin.
class LlmReviewer : public Reviewer {
 public:
  LlmReviewer(std::shared_ptr<llm::Session> s, std::unique_ptr<Reviewer> builtin)
      : s_(std::move(s)), builtin_(std::move(builtin)) {}
  std::optional<Candidate> repair(const KernelProfile& k, const Candidate& failed,
                                  const verify::CascadeResult& result) override;

 private:
  std::shared_ptr<llm::Session> s_;
  std::unique_ptr<Reviewer> builtin_;
};

}  // namespace kopt::agents
