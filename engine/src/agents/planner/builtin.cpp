// Built-in planner: which strategies apply to a kernel follows from its kind
// (what can be varied safely) and its place on the roofline (nothing is worth
// trying for a kernel already at its floor).
#include "agents/planner/builtin.h"

#include <fmt/format.h>

#include "agents/coder/builtin.h"
#include "agents/coder/config_space.h"
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
  // config only how the same traffic is scheduled. Rewrites next: the kernel's own source, made
  // cheaper without changing what it computes; they keep Inductor's heuristics, so they compete with
  // the configs on the same footing. The coder builds each once, here; the search proposes those.
  std::string rewrite_why;
  for (Generated& g : generate(k)) {
    if (g.strategy == "rewrite:source") rewrite_why = g.why;
    if (!g.declined.empty()) p.declined.push_back(g.declined);
    if (g.candidates.empty()) continue;
    p.strategies.push_back(g.strategy);
    p.built[g.strategy] = std::move(g.candidates);
  }
  if (kernel_shape(*k.kernel, k.launches.front(), &why)) p.strategies.push_back("config");
  if (p.strategies.empty()) p.note = why + (rewrite_why.empty() ? "" : "; " + rewrite_why);
  return p;
}

}  // namespace kopt::agents
