// One run's use of the LLM: the client, the prompts, and the transcript of
// every exchange (role, prompt version, kernel, prompt, reply, tokens, latency,
// cost, outcome). The agents record what became of each reply — a proposal
// (the candidate hashes it produced), unparsable (why), failed, or refused by
// the budget — and the report joins those hashes with the cascade's verdicts.
// The transcript holds prompts and replies only, never request headers, so the
// API key cannot reach it; the client scrubs any echo of the key from replies.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/client.h"
#include "llm/prompts.h"

namespace kopt::llm {

struct Exchange {
  std::string role, prompt_version, kernel;
  std::string prompt, reply;          // reply: the text; for a malformed reply, the body as received
  Reply meta;                         // tokens, latency, cost, error (text or raw body moved to `reply`)
  std::string outcome = "pending";    // proposed | unparsable | failed | refused
  std::string reason;
  std::vector<std::string> candidates;  // hashes of the candidates the reply became
};

class Session {
 public:
  explicit Session(Config c) : client_(std::move(c)) {}
  Client& client() { return client_; }
  const Client& client() const { return client_; }
  const Config& config() const { return client_.config(); }

  // Renders `role`'s template with `vars`, sends it after the system prompt, records the
  // exchange and returns its index with the reply.
  std::pair<size_t, Reply> ask(const std::string& role, const std::string& kernel,
                               const std::map<std::string, std::string>& vars);
  // What became of exchange `i` (the reply failed: outcome "failed" or "refused" is set by ask()).
  void settle(size_t i, const std::string& outcome, const std::string& reason,
              const std::vector<std::string>& candidate_hashes = {});
  // The outcomes of earlier exchanges for `kernel` and `role`, one line each, for "already tried".
  std::vector<std::string> history(const std::string& kernel, const std::string& role) const;

  std::vector<Exchange> exchanges() const;
  // One JSON object per line: the transcript file of the run.
  std::string jsonl() const;

 private:
  Client client_;
  mutable std::mutex mu_;
  std::vector<Exchange> log_;
};

// One exchange as JSON (the transcript line).
nlohmann::json exchange_json(const Exchange& e);

}  // namespace kopt::llm
