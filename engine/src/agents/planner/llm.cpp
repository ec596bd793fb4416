#include "agents/planner/llm.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/llm/common.h"
#include "agents/planner/builtin.h"
#include "profile/roofline.h"

namespace kopt::agents {

Plan LlmPlanner::plan(const KernelProfile& k) {
  Plan base = BuiltinPlanner().plan(k);
  bool at_floor = k.time_ms && k.floor_ms && *k.time_ms <= profile::kNearFloor * *k.floor_ms;
  if (at_floor || k.launches.empty()) return base;  // nothing to win: no tokens spent
  std::vector<std::string> offered = hybrid_ ? base.strategies : std::vector<std::string>{};
  offered.push_back("rewrite");
  std::string listed;
  for (const std::string& s : offered)
    listed += "- " + s + (s == "rewrite" ? ": a new kernel written by the coder\n"
                          : s == "config" ? ": other launch configs of the original kernel\n"
                          : s == "rewrite:source" ? ": kernelopt's semantics-preserving rewrites of the kernel's source\n"
                          : s.rfind("pattern:", 0) == 0 ? ": kernelopt's generator for the kernel's access pattern\n"
                                          : ": kernelopt's expert template for the family\n");
  Plan p;
  p.built = std::move(base.built);  // the built-in coder proposes what the built-in planner made
  p.strategies = offered;  // when the reply is unusable, everything offered is tried
  auto [i, reply] = s_->ask("planner", k.kernel->name, {{"facts", llm_support::kernel_facts(k)}, {"strategies", listed}});
  if (!reply.ok) return p;
  auto j = llm_support::one_json_object(reply.text);
  if (!j.value || !(*j.value)["strategies"].is_array()) {
    s_->settle(i, "unparsable", j.value ? "expected {\"strategies\": [...], \"ideas\": [...]}" : j.reason);
    return p;
  }
  std::vector<std::string> chosen;
  for (const nlohmann::json& s : (*j.value)["strategies"])
    if (s.is_string() && std::find(offered.begin(), offered.end(), s) != offered.end() &&
        std::find(chosen.begin(), chosen.end(), s) == chosen.end())
      chosen.push_back(s);
  if (chosen.empty()) {
    s_->settle(i, "unparsable", "none of the strategies it chose was offered");
    return p;
  }
  if (hybrid_)
    for (const std::string& s : offered)
      if (std::find(chosen.begin(), chosen.end(), s) == chosen.end()) chosen.push_back(s);
  p.strategies = chosen;
  if ((*j.value).contains("ideas") && (*j.value)["ideas"].is_array())
    for (const nlohmann::json& idea : (*j.value)["ideas"])
      if (idea.is_string() && p.ideas.size() < 5) p.ideas.push_back(idea.get<std::string>().substr(0, 400));
  s_->settle(i, "proposed", fmt::format("strategies: {}", fmt::join(p.strategies, ", ")));
  return p;
}

}  // namespace kopt::agents
