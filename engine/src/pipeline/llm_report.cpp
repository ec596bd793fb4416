#include "pipeline/llm_report.h"

#include <map>

namespace kopt::pipeline {

using nlohmann::json;

json llm_summary(const llm::Session& s, const std::vector<search::KernelOutcome>& outcomes,
                 const std::string& transcript_file) {
  struct Verdict {
    search::Outcome outcome = search::Outcome::not_run;
    std::string gate;
    bool chosen = false;
    std::optional<double> speedup;
  };
  std::map<std::pair<std::string, std::string>, Verdict> verdicts;  // (kernel, hash)
  for (const search::KernelOutcome& k : outcomes)
    for (size_t i = 0; i < k.candidates.size(); ++i) {
      const search::CandidateRecord& c = k.candidates[i];
      Verdict v{c.outcome, "", k.chosen == i, std::nullopt};
      if (c.result && !c.result->accepted && !c.result->gates.empty()) v.gate = c.result->gates.back().gate;
      if (v.chosen) v.speedup = k.speedup;
      verdicts[{k.profile.kernel->name, c.hash}] = v;
    }
  json roles = json::object();
  int64_t tokens_in = 0, tokens_out = 0;
  double cost = 0;
  size_t chosen = 0;
  json speedups = json::array();
  const auto ex = s.exchanges();
  for (const llm::Exchange& e : ex) {
    json& r = roles[e.role];
    if (r.is_null())
      r = {{"exchanges", 0}, {"proposed", 0}, {"unparsable", 0}, {"failed", 0}, {"refused", 0}, {"candidates", 0},
           {"accepted", 0}, {"chosen", 0}, {"screened_out", 0}, {"not_run", 0},
           {"rejected_at", {{"G1", 0}, {"G2", 0}, {"G3", 0}, {"G4", 0}}}, {"input_tokens", 0},
           {"output_tokens", 0}, {"cost", 0.0}};
    r["exchanges"] = r["exchanges"].get<int>() + 1;
    if (r.contains(e.outcome)) r[e.outcome] = r[e.outcome].get<int>() + 1;
    r["input_tokens"] = r["input_tokens"].get<int64_t>() + e.meta.input_tokens;
    r["output_tokens"] = r["output_tokens"].get<int64_t>() + e.meta.output_tokens;
    r["cost"] = r["cost"].get<double>() + e.meta.cost;
    tokens_in += e.meta.input_tokens, tokens_out += e.meta.output_tokens, cost += e.meta.cost;
    for (const std::string& h : e.candidates) {
      r["candidates"] = r["candidates"].get<int>() + 1;
      auto it = verdicts.find({e.kernel, h});
      // A proposal the search dropped as a duplicate of an earlier candidate has no record of its own.
      search::Outcome outcome = it == verdicts.end() ? search::Outcome::not_run : it->second.outcome;
      std::string key(search::to_string(outcome));
      if (outcome == search::Outcome::rejected && !it->second.gate.empty()) {
        json& at = r["rejected_at"];
        at[it->second.gate] = at.value(it->second.gate, 0) + 1;
      } else if (r.contains(key)) {
        r[key] = r[key].get<int>() + 1;
      }
      if (it != verdicts.end() && it->second.chosen) {
        r["chosen"] = r["chosen"].get<int>() + 1, ++chosen;
        speedups.push_back(it->second.speedup ? json(*it->second.speedup) : json(nullptr));
      }
    }
  }
  llm::Spent spent = s.client().spent();
  const llm::Config& c = s.config();
  return {{"provider", llm::provider_name(c.provider)},
          {"model", c.model},
          {"http_requests", spent.requests},
          {"exchanges", ex.size()},
          {"not_sent", spent.refused},
          {"input_tokens", tokens_in},
          {"output_tokens", tokens_out},
          {"cost", cost},
          {"budget", {{"max_tokens", c.budget.max_tokens}, {"max_cost", c.budget.max_cost},
                      {"spent", !s.client().budget_spent().empty()}}},
          {"roles", roles},
          {"kernels_won", chosen},
          {"speedups_won", speedups},
          {"cost_per_kernel_won", chosen ? json(cost / chosen) : json(nullptr)},
          {"tokens_per_kernel_won", chosen ? json((tokens_in + tokens_out) / static_cast<double>(chosen)) : json(nullptr)},
          {"transcripts", transcript_file}};
}

}  // namespace kopt::pipeline
