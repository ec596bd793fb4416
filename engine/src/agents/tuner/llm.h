#pragma once

#include <memory>

#include "agents/agent.h"
#include "llm/session.h"

namespace kopt::agents {

// LLM tuner: asks for launch configs of an accepted candidate (a small JSON), checks each
// (known keys, powers of two in range, every block size of the kernel set; for configs of the
// original kernel also the safe config space), and pins them into the candidate's source. In
// hybrid mode the built-in tuner's neighbours come first; candidates of either origin are tuned.
class LlmTuner : public Tuner {
 public:
  LlmTuner(std::shared_ptr<llm::Session> s, std::unique_ptr<Tuner> builtin)
      : s_(std::move(s)), builtin_(std::move(builtin)) {}
  std::vector<Candidate> neighbours(const KernelProfile& k, const Candidate& accepted,
                                    const std::vector<std::string>& tried) override;

 private:
  std::shared_ptr<llm::Session> s_;
  std::unique_ptr<Tuner> builtin_;
};

// A suggested config merged over `base` and checked against the kernel's block parameters;
// nullopt with the reason when it is not a valid config (shared with the tests).
std::optional<nlohmann::json> check_suggested_config(const ir::Kernel& k, const nlohmann::json& base,
                                                     const nlohmann::json& suggested, std::string* why);

}  // namespace kopt::agents
