#pragma once

#include "agents/agent.h"

namespace kopt::agents {

class BuiltinPlanner : public Planner {
 public:
  Plan plan(const KernelProfile& k) override;
};

}  // namespace kopt::agents
