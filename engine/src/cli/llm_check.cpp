// `kernelopt llm check`: is the configured endpoint usable? One tiny request
// (a one-word answer), then the latency, the model that answered, the tokens
// it reported, and ok or the reason it failed. Exit 0 only when it worked.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "llm/client.h"
#include "llm/config.h"
#include "util/error.h"

namespace kopt::cli {

int llm_check(const LlmCheckOptions& o) {
  llm::Config c = llm::load_config(o.config);
  if (!c.configured())
    throw UserError("no LLM endpoint configured: set llm.endpoint and llm.model in kernelopt.toml (or --config FILE), "
                    "or $KERNELOPT_LLM_ENDPOINT and $KERNELOPT_LLM_MODEL (docs/llm.md)");
  c.max_reply_tokens = 16;
  c.budget = {};  // the check is not part of any run's budget
  llm::Client client(c);
  llm::Reply r = client.send({{"user", "Reply with the single word: ok"}});
  nlohmann::json j = {{"ok", r.ok}, {"provider", llm::provider_name(c.provider)}, {"url", c.url()},
                      {"model", r.model.empty() ? c.model : r.model}, {"latency_s", r.latency_s},
                      {"attempts", r.attempts}, {"input_tokens", r.input_tokens},
                      {"output_tokens", r.output_tokens}, {"error", r.error}, {"config", c.source}};
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("endpoint: {} ({}, from {})\n", c.url(), llm::provider_name(c.provider), c.source);
    fmt::print("model:    {}\n", j["model"].get<std::string>());
    fmt::print("latency:  {:.3f} s ({} attempt{})\n", r.latency_s, r.attempts, r.attempts == 1 ? "" : "s");
    if (r.ok) fmt::print("tokens:   {} in, {} out{}\nok\n", r.input_tokens, r.output_tokens,
                         r.tokens_estimated ? " (estimated: the endpoint reported no usage)" : "");
    else fmt::print("failed: {}\n", r.error);
  }
  return r.ok ? 0 : 1;
}

}  // namespace kopt::cli
