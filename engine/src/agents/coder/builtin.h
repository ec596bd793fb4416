#pragma once

#include "agents/agent.h"

namespace kopt::agents {

class BuiltinCoder : public Coder {
 public:
  explicit BuiltinCoder(size_t max_configs = 48) : max_configs_(max_configs) {}
  std::vector<Candidate> propose(const KernelProfile& k, const Plan& p) override;

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
