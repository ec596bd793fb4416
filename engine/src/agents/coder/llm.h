#pragma once

#include <memory>

#include "agents/agent.h"
#include "llm/session.h"

namespace kopt::agents {

// LLM coder: for the "rewrite" strategy, asks for a new entry function (one fenced block)
// `coder_proposals` times, each request told what became of the earlier replies; the reply's
// function replaces the original's entry under Inductor's own heuristics decorator, so the
// launch site is unchanged. In hybrid mode the built-in coder's candidates join the LLM's, in the
// order the plan gives "rewrite" and the built-in strategies; the search screens and verifies them alike.
class LlmCoder : public Coder {
 public:
  LlmCoder(std::shared_ptr<llm::Session> s, std::unique_ptr<Coder> builtin)
      : s_(std::move(s)), builtin_(std::move(builtin)) {}
  std::vector<Candidate> propose(const KernelProfile& k, const Plan& p) override;
  // The built-in fusion strategies' candidates (hybrid mode), then `coder_proposals` fused kernels
  // asked for the whole region (llm_region.h), for a region of two to kMaxRegionLaunches launches with
  // an internal buffer.
  fusion::RegionPlan propose_region(const RegionUnit& u) override;

 private:
  std::shared_ptr<llm::Session> s_;
  std::unique_ptr<Coder> builtin_;  // null in llm mode
};

}  // namespace kopt::agents
