#pragma once

#include "agents/agent.h"

namespace kopt::agents {

class BuiltinTuner : public Tuner {
 public:
  std::vector<Candidate> neighbours(const KernelProfile& k, const Candidate& accepted,
                                    const std::vector<std::string>& tried) override;
};

}  // namespace kopt::agents
