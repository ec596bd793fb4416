#pragma once

#include "agents/agent.h"

namespace kopt::agents {

// What one generator of the built-in coder gave a kernel: its candidates, and why it (or, for the
// rewrites, each rewrite that gave nothing) declined.
struct Generated {
  std::string strategy;  // "template:<family>" | "rewrite:source"
  std::vector<Candidate> candidates;
  std::string why;       // the generator's own words; empty when nothing declined
  std::string declined;  // as report.json's `declined` lists it; empty when not listed
};

// Every generator of the built-in coder run once on `k`: its family's template (when the library has
// one), then the source rewrites. The planner offers the strategies that gave candidates, reports the
// declines, and hands the candidates on in Plan::built.
std::vector<Generated> generate(const KernelProfile& k);

class BuiltinCoder : public Coder {
 public:
  explicit BuiltinCoder(size_t max_configs = 48) : max_configs_(max_configs) {}
  std::vector<Candidate> propose(const KernelProfile& k, const Plan& p) override;
  // The fusion strategies (fusion/fusion.h).
  fusion::RegionPlan propose_region(const RegionUnit& u) override;

 private:
  size_t max_configs_;
};

// Candidates pinning each config to `k`'s own source, or to `base` (a candidate of `k` in its
// config space; shared by coder, tuner, reviewer).
std::vector<Candidate> config_candidates(const KernelProfile& k, const std::vector<nlohmann::json>& configs,
                                         const std::string& origin, const std::string& parent = "",
                                         const Candidate* base = nullptr);

// Whether `config` is safe for every launch of `k` (launches may differ in numels).
bool safe_for_all_launches(const KernelProfile& k, const nlohmann::json& config);

}  // namespace kopt::agents
