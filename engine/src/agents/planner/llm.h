#pragma once

#include <memory>

#include "agents/agent.h"
#include "llm/session.h"

namespace kopt::agents {

// LLM planner: offers the LLM the strategies that apply ("rewrite" always; in hybrid mode
// also the built-in planner's config and template strategies) and takes its choice and its
// ideas for the coder. In hybrid mode the strategies it leaves out still follow its choice,
// so LLM and built-in proposals compete; kernels already at their floor are not asked about.
class LlmPlanner : public Planner {
 public:
  LlmPlanner(std::shared_ptr<llm::Session> s, bool hybrid) : s_(std::move(s)), hybrid_(hybrid) {}
  Plan plan(const KernelProfile& k) override;

 private:
  std::shared_ptr<llm::Session> s_;
  bool hybrid_;
};

}  // namespace kopt::agents
