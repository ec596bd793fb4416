// Built-in planner: which strategies apply to a kernel follows from its kind
// (what can be varied safely) and its place on the roofline (nothing is worth
// trying for a kernel already at its floor).
#include "agents/planner/builtin.h"

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/rewrites.h"
#include "agents/coder/templates/templates.h"
#include "profile/roofline.h"

namespace kopt::agents {

Plan BuiltinPlanner::plan(const KernelProfile& k) {
  Plan p;
  if (k.time_ms && k.floor_ms && *k.time_ms <= profile::kNearFloor * *k.floor_ms) {
    p.note = fmt::format("already within {:.0f}% of its floor ({:.4f} ms vs {:.4f} ms)",
                         (profile::kNearFloor - 1) * 100, *k.time_ms, *k.floor_ms);
    return p;
  }
  std::string why;
  if (k.launches.empty()) {
    p.note = "never launched in the recorded run";
    return p;
  }
  // Templates first: an expert kernel of the family can change the memory traffic, a launch
  // config only how the same traffic is scheduled.
  if (templates::has_template(k.family)) {
    std::string template_why;
    if (!templates::instantiate(k, &template_why).empty()) p.strategies.push_back("template:" + k.family);
    else p.declined.push_back("template:" + k.family + ": " + template_why);
  }
  // Rewrites next: the kernel's own source, made cheaper without changing what it computes;
  // they keep Inductor's heuristics, so they compete with the configs on the same footing.
  std::string rewrite_why;
  if (rewrites::applies(k, &rewrite_why)) p.strategies.push_back("rewrite:source");
  if (!rewrite_why.empty()) p.declined.push_back("rewrite: " + rewrite_why);
  if (kernel_shape(*k.kernel, k.launches.front(), &why)) p.strategies.push_back("config");
  if (p.strategies.empty()) p.note = why + (rewrite_why.empty() ? "" : "; " + rewrite_why);
  return p;
}

}  // namespace kopt::agents
