// Built-in coder: for the "config" strategy, the kernel's own source with each
// launch config of the safe config space pinned (agents/coder/config_space.h).
// Templates of expert kernels per family ("template:<family>",
// agents/coder/templates/templates.h) and semantics-preserving rewrites of the
// kernel's own source ("rewrite:source", agents/coder/rewrites/rewrites.h) are
// further strategies, each a table of generators: the planner runs them once
// (generate) and the coder proposes what they built.
#include "agents/coder/builtin.h"

#include <algorithm>

#include "agents/coder/config_space.h"
#include "agents/coder/fusion/fusion.h"
#include "agents/coder/patterns/patterns.h"
#include "agents/coder/rewrites/rewrites.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"

namespace kopt::agents {

bool safe_for_all_launches(const KernelProfile& k, const nlohmann::json& config) {
  for (const nlohmann::json& l : k.launches) {
    auto s = kernel_shape(*k.kernel, l, nullptr);
    if (!s || !config_is_safe(*s, config)) return false;
  }
  return !k.launches.empty();
}

std::vector<Candidate> config_candidates(const KernelProfile& k, const std::vector<nlohmann::json>& configs,
                                         const std::string& origin, const std::string& parent,
                                         const Candidate* base) {
  std::vector<Candidate> out;
  for (const nlohmann::json& c : configs) {
    if (!safe_for_all_launches(k, c)) continue;
    Candidate cand;
    cand.origin = origin;
    cand.description = ir::describe_config(c);
    cand.source = ir::pin_config(base ? base->source : k.kernel->source, k.kernel->name, c);
    cand.config = c;
    cand.parent = parent;
    if (base) {
      cand.description = base->description.substr(0, base->description.find(" @ ")) + " @ " + cand.description;
      cand.own_config_space = true;
    }
    out.push_back(std::move(cand));
  }
  return out;
}

std::vector<Generated> generate(const KernelProfile& k) {
  std::vector<Generated> out;
  if (templates::has_template(k.family)) {
    Generated& g = out.emplace_back();
    g.strategy = "template:" + k.family;
    g.candidates = templates::instantiate(k, &g.why);
    if (g.candidates.empty()) g.declined = g.strategy + ": " + g.why;
  }
  // Access-pattern generators read the kernel itself: tried on every kernel, each declines alone.
  for (const std::string& name : patterns::names()) {
    Generated& g = out.emplace_back();
    g.strategy = "pattern:" + name;
    g.candidates = patterns::instantiate(name, k, &g.why);
    if (g.candidates.empty()) g.declined = g.strategy + ": " + g.why;
  }
  Generated& g = out.emplace_back();
  g.strategy = "rewrite:source";
  // Some rewrites may decline while others apply: their reasons are listed either way.
  g.candidates = rewrites::candidates(k, &g.why);
  if (!g.why.empty()) g.declined = "rewrite: " + g.why;
  return out;
}

std::vector<Candidate> BuiltinCoder::propose(const KernelProfile& k, const Plan& p) {
  // One list per strategy, each most promising first; merged round-robin (below) so that a
  // search whose budget screens only its first batch sees the head of every strategy, not 15
  // templates and no launch config (which is what won the column arg-reduction on the H200).
  std::vector<std::vector<Candidate>> groups;
  for (const std::string& strategy : p.strategies) {
    std::vector<Candidate>& out = groups.emplace_back();
    // Built while planning (Plan::built); a plan made elsewhere (a test's, the LLM planner's) has none.
    if (auto built = p.built.find(strategy); built != p.built.end()) {
      out = built->second;
      continue;
    }
    if (strategy.rfind("template:", 0) == 0) {
      std::string why;
      out = templates::instantiate(k, &why);
      continue;
    }
    if (strategy.rfind("pattern:", 0) == 0) {
      std::string why;
      out = patterns::instantiate(strategy.substr(8), k, &why);
      continue;
    }
    if (strategy == "rewrite:source") {
      std::string why;
      out = rewrites::candidates(k, &why);
      continue;
    }
    if (strategy != "config") continue;
    auto shape = kernel_shape(*k.kernel, k.launches.front(), nullptr);
    if (!shape) continue;
    std::vector<nlohmann::json> configs = config_space(*shape);
    if (configs.size() > max_configs_) configs.resize(max_configs_);
    for (Candidate& c : config_candidates(k, configs, "config")) out.push_back(std::move(c));
  }
  std::vector<Candidate> merged;
  for (size_t i = 0, left = 1; left; ++i) {
    left = 0;
    for (auto& g : groups)
      if (i < g.size()) merged.push_back(std::move(g[i])), ++left;
  }
  std::stable_partition(merged.begin(), merged.end(), [](const Candidate& c) { return !c.screen_last; });
  return merged;
}

fusion::RegionPlan BuiltinCoder::propose_region(const RegionUnit& u) {
  return fusion::plan_region(*u.art, *u.f, *u.region, u.winners, u.pins);
}

}  // namespace kopt::agents
