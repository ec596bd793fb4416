// Where the LLM endpoint is and what it may spend: a TOML file (--config, else
// $KERNELOPT_CONFIG, else ./kernelopt.toml when present), then environment
// variables over it (docs/llm.md lists both). The API key itself is never in
// the file or in this struct's printable parts: the config names the
// environment variable that holds it, and the key is read from there only
// when a request is sent.
#pragma once

#include <optional>
#include <string>

#include "llm/wire.h"

namespace kopt::llm {

struct Budget {
  int64_t max_tokens = 500000;       // input + output tokens of the whole run; 0: no limit
  double max_cost = 0;               // in the currency of the prices below; 0: no limit
  double price_input_per_mtok = 0;   // per million input tokens
  double price_output_per_mtok = 0;  // per million output tokens
};

struct Config {
  Provider provider = Provider::OpenAI;
  std::string endpoint;     // base URL ("https://api.openai.com/v1", "http://localhost:8000/v1")
  std::string model;
  std::string api_key_env;  // the NAME of the variable holding the key; empty: no key (local servers)
  bool stream = true;
  int64_t max_reply_tokens = 4096;
  double temperature = 0.2;
  double timeout_s = 180;        // one attempt, connection to last byte
  double connect_timeout_s = 10;
  int max_retries = 4;           // on 429, 5xx and failed connections
  double backoff_base_s = 1, backoff_cap_s = 60;
  int concurrency = 4;           // requests in flight at once
  int64_t max_reply_bytes = 1 << 20;
  Budget budget;
  // Per-role limits.
  int coder_proposals = 2;       // coder requests per kernel
  int profiler_kernels = 3;      // kernels the profiler asks about (the top-ranked ones)
  int tuner_configs = 4;         // configs the tuner may suggest per round
  std::string source;            // where the settings came from, for messages ("kernelopt.toml + env")

  bool configured() const { return !endpoint.empty(); }
  // The full URL requests go to: the endpoint plus /chat/completions or /messages, unless given.
  std::string url() const;
  // The key from the named variable; "" when none is named. Throws UserError when the
  // named variable is unset or empty (naming the variable, never a value).
  std::string api_key() const;
};

// Loads the config: `path` when given (a missing file is an error), else $KERNELOPT_CONFIG, else
// ./kernelopt.toml if it exists; then the environment. Unknown keys and wrong types are
// UserErrors naming the key. An unconfigured result (no endpoint) is not an error.
Config load_config(const std::string& path);

// Parses TOML text (for tests and load_config); `origin` names it in error messages.
Config parse_config(const std::string& toml_text, const std::string& origin);

// Applies the KERNELOPT_LLM_* environment variables over `c`.
void apply_env(Config& c);

}  // namespace kopt::llm
