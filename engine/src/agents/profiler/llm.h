#pragma once

#include <memory>

#include "agents/agent.h"
#include "llm/session.h"

namespace kopt::agents {

// LLM profiler: the numbers (bytes, FLOPs, floor, ranking) stay the built-in profiler's —
// they are measured or counted, not guessed — and the LLM explains the bottleneck of the
// top-ranked kernels from the same facts; its reading goes into the planner's and coder's prompts.
class LlmProfiler : public Profiler {
 public:
  explicit LlmProfiler(std::shared_ptr<llm::Session> s) : s_(std::move(s)) {}
  std::vector<KernelProfile> rank(std::vector<KernelProfile> kernels,
                                  const std::optional<nlohmann::json>& ceilings) override;

 private:
  std::shared_ptr<llm::Session> s_;
};

}  // namespace kopt::agents
