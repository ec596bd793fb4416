// The agent registry: `--agents NAME` picks one implementation per role.
#include <fmt/format.h>

#include "agents/coder/builtin.h"
#include "agents/planner/builtin.h"
#include "agents/profiler/builtin.h"
#include "agents/reviewer/builtin.h"
#include "agents/tuner/builtin.h"
#include "util/error.h"

namespace kopt::agents {

Agents make_agents(const std::string& name) {
  if (name == "builtin") {
    Agents a;
    a.profiler = std::make_unique<BuiltinProfiler>();
    a.planner = std::make_unique<BuiltinPlanner>();
    a.coder = std::make_unique<BuiltinCoder>();
    a.reviewer = std::make_unique<BuiltinReviewer>();
    a.tuner = std::make_unique<BuiltinTuner>();
    return a;
  }
  throw UserError(fmt::format("--agents {}: unknown agents; available: builtin (LLM agents need an endpoint, "
                              "not configured in this build)",
                              name));
}

}  // namespace kopt::agents
