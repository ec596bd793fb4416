// The agent registry: `--agents NAME` picks one implementation per role —
// builtin, llm (the LLM implementations alone) or hybrid (both propose and
// compete; the default when an endpoint is configured).
#include <fmt/format.h>

#include "agents/coder/builtin.h"
#include "agents/coder/llm.h"
#include "agents/planner/builtin.h"
#include "agents/planner/llm.h"
#include "agents/profiler/builtin.h"
#include "agents/profiler/llm.h"
#include "agents/reviewer/builtin.h"
#include "agents/reviewer/llm.h"
#include "agents/tuner/builtin.h"
#include "agents/tuner/llm.h"
#include "llm/config.h"
#include "llm/session.h"
#include "util/error.h"

namespace kopt::agents {

Agents make_agents(const std::string& requested, const llm::Config* config) {
  bool endpoint = config && config->configured();
  std::string name = !requested.empty() ? requested : endpoint ? "hybrid" : "builtin";
  Agents a;
  a.name = name;
  if (name == "builtin") {
    a.profiler = std::make_unique<BuiltinProfiler>();
    a.planner = std::make_unique<BuiltinPlanner>();
    a.coder = std::make_unique<BuiltinCoder>();
    a.reviewer = std::make_unique<BuiltinReviewer>();
    a.tuner = std::make_unique<BuiltinTuner>();
    return a;
  }
  if (name != "llm" && name != "hybrid")
    throw UserError(fmt::format("--agents {}: unknown agents; use builtin, llm or hybrid", name));
  if (!endpoint)
    throw UserError(fmt::format("--agents {} needs an LLM endpoint: set llm.endpoint and llm.model in kernelopt.toml "
                                "(or --config FILE), or $KERNELOPT_LLM_ENDPOINT and $KERNELOPT_LLM_MODEL (docs/llm.md)",
                                name));
  a.llm = std::make_shared<llm::Session>(*config);
  bool hybrid = name == "hybrid";
  a.profiler = std::make_unique<LlmProfiler>(a.llm);
  a.planner = std::make_unique<LlmPlanner>(a.llm, hybrid);
  a.coder = std::make_unique<LlmCoder>(a.llm, hybrid ? std::make_unique<BuiltinCoder>() : nullptr);
  a.reviewer = std::make_unique<LlmReviewer>(a.llm, hybrid ? std::make_unique<BuiltinReviewer>() : nullptr);
  a.tuner = std::make_unique<LlmTuner>(a.llm, hybrid ? std::make_unique<BuiltinTuner>() : nullptr);
  return a;
}

}  // namespace kopt::agents
