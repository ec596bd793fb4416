#pragma once

#include "agents/agent.h"

namespace kopt::agents {

class BuiltinReviewer : public Reviewer {
 public:
  std::optional<Candidate> repair(const KernelProfile& k, const Candidate& failed,
                                  const verify::CascadeResult& result) override;
};

}  // namespace kopt::agents
