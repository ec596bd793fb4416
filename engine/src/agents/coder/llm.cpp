#include "agents/coder/llm.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/llm/common.h"
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

}  // namespace kopt::agents
