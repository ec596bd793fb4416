#pragma once

#include "agents/agent.h"

namespace kopt::agents {

class BuiltinProfiler : public Profiler {
 public:
  std::vector<KernelProfile> rank(std::vector<KernelProfile> kernels,
                                  const std::optional<nlohmann::json>& ceilings) override;
};

}  // namespace kopt::agents
