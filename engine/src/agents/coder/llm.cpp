#include "agents/coder/llm.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/coder/fusion/fusion.h"
#include "agents/coder/llm_region.h"
#include "agents/llm/common.h"
#include "profile/regions.h"
#include "verify/cascade.h"

namespace kopt::agents {

std::vector<Candidate> LlmCoder::propose(const KernelProfile& k, const Plan& p) {
  std::vector<Candidate> builtin = builtin_ ? builtin_->propose(k, p) : std::vector<Candidate>{};
  auto rewrite = std::find(p.strategies.begin(), p.strategies.end(), "rewrite");
  if (rewrite == p.strategies.end()) return builtin;
  // The plan's order is the order of proposals (CPU mode verifies only the first ones): the LLM's
  // candidates go first when the planner put "rewrite" first.
  const bool llm_first = rewrite == p.strategies.begin();
  std::vector<Candidate> out;
  std::string ideas;
  for (const std::string& i : p.ideas) ideas += "- " + i + "\n";
  for (int n = 0; n < s_->config().coder_proposals; ++n) {
    std::vector<std::string> tried = s_->history(k.kernel->name, "coder");
    auto [i, reply] = s_->ask("coder", k.kernel->name,
                              {{"facts", llm_support::kernel_facts(k)},
                               {"ideas", ideas.empty() ? "(none)\n" : ideas},
                               {"tried", tried.empty() ? "(nothing yet)" : fmt::format("{}", fmt::join(tried, "\n"))},
                               {"entry", k.kernel->entry},
                               {"params", llm_support::params(k)}});
    if (!reply.ok) {
      if (reply.not_sent) break;
      continue;
    }
    auto src = llm_support::candidate_source(k, reply.text);
    if (!src.value) {
      s_->settle(i, "unparsable", src.reason);
      continue;
    }
    Candidate c;
    c.origin = "llm:rewrite";
    c.description = fmt::format("LLM rewrite (reply {} of {})", n + 1, s_->config().coder_proposals);
    c.source = *src.value;
    s_->settle(i, "proposed", "", {verify::source_hash(c.source)});
    out.push_back(std::move(c));
  }
  out.insert(llm_first ? out.end() : out.begin(), std::make_move_iterator(builtin.begin()),
             std::make_move_iterator(builtin.end()));
  return out;
}

fusion::RegionPlan LlmCoder::propose_region(const RegionUnit& u) {
  fusion::RegionPlan plan = builtin_ ? builtin_->propose_region(u) : fusion::RegionPlan{};
  const profile::Region& r = *u.region;
  if (plan.kernels.empty())
    for (size_t i : r.launches) plan.kernels.push_back(u.art->kernels[u.f->launches[i].kernel].name);
  if (r.launches.size() < 2 || r.internal.empty()) return plan;
  if (r.launches.size() > llm_support::kMaxRegionLaunches) {
    plan.declined.push_back(fmt::format("llm: {} launches, more than the {} one reply is asked to fuse",
                                        r.launches.size(), llm_support::kMaxRegionLaunches));
    return plan;
  }
  // Region candidates are tried in order (docs/optimize.md, "Regions"): the built-in strategies' first (hybrid).
  const std::string label = fmt::format("region {} of graph {}", u.index, u.graph);
  std::map<std::string, std::string> vars = llm_support::region_vars(u);
  for (int n = 0; n < s_->config().coder_proposals; ++n) {
    std::vector<std::string> tried = s_->history(label, "region");
    vars["tried"] = tried.empty() ? "(nothing yet)" : fmt::format("{}", fmt::join(tried, "\n"));
    auto [i, reply] = s_->ask("region", label, vars);
    if (!reply.ok) {
      if (reply.not_sent) break;
      continue;
    }
    auto c = llm_support::region_candidate(u, reply.text);
    if (!c.value) {
      s_->settle(i, "unparsable", c.reason);
      plan.declined.push_back(fmt::format("llm (reply {}): {}", n + 1, c.reason));
      continue;
    }
    c.value->id = fmt::format("r{}", plan.candidates.size() + 1);
    c.value->description += fmt::format(" (reply {} of {})", n + 1, s_->config().coder_proposals);
    s_->settle(i, "proposed", "", {verify::source_hash(c.value->edit.source)});
    plan.candidates.push_back(std::move(*c.value));
  }
  return plan;
}

}  // namespace kopt::agents
