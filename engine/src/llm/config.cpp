#include "llm/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>  // header-only use: no shared library to ship beside the binary

#include "util/error.h"

namespace kopt::llm {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Strict reading: every key must be known and of the right type, so a typo is an error
// naming the key rather than a setting silently ignored.
class Reader {
 public:
  Reader(const toml::table& t, std::string where, std::string origin)
      : t_(t), where_(std::move(where)), origin_(std::move(origin)) {}

  template <class T>
  void get(const char* key, T& out) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return;
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = n->value<std::string>(); v && n->is_string()) return void(out = *v);
      fail(key, "a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (n->is_boolean()) return void(out = *n->value<bool>());
      fail(key, "true or false");
    } else if constexpr (std::is_integral_v<T>) {
      if (n->is_integer()) return void(out = static_cast<T>(*n->value<int64_t>()));
      fail(key, "an integer");
    } else {
      if (n->is_number()) return void(out = *n->value<double>());
      fail(key, "a number");
    }
  }
  const toml::table* sub(const char* key) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) fail(key, "a table");
    return n->as_table();
  }
  void no_unknown() const {
    for (const auto& [k, v] : t_)
      if (!seen_.count(std::string(k.str())))
        throw UserError(fmt::format("{}: unknown key {}{}; see docs/llm.md for the keys", origin_, where_, k.str()));
  }

 private:
  [[noreturn]] void fail(const char* key, const char* what) const {
    throw UserError(fmt::format("{}: {}{} must be {}", origin_, where_, key, what));
  }
  const toml::table& t_;
  std::string where_, origin_;
  std::set<std::string> seen_;
};

void set_provider(Config& c, const std::string& name, const std::string& origin) {
  auto p = provider_from_name(name);
  if (!p) throw UserError(fmt::format("{}: provider \"{}\": use openai (any OpenAI-compatible server) or anthropic",
                                      origin, name));
  c.provider = *p;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

template <class T>
void env_number(const char* name, T& out) {
  const char* v = env(name);
  if (!v) return;
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used != std::string(v).size()) throw std::invalid_argument(v);
    out = static_cast<T>(d);
  } catch (const std::exception&) {
    throw UserError(fmt::format("${}={}: not a number", name, v));
  }
}

}  // namespace

std::string Config::url() const {
  std::string base = endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string path = provider == Provider::OpenAI ? "/chat/completions" : "/messages";
  return ends_with(base, path) ? base : base + path;
}

std::string Config::api_key() const {
  if (api_key_env.empty()) return "";
  const char* v = std::getenv(api_key_env.c_str());
  if (!v || !*v)
    throw UserError(fmt::format("the API key variable ${} is not set; export it, or set api_key_env to the "
                                "variable that holds the key",
                                api_key_env));
  return v;
}

Config parse_config(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw UserError(fmt::format("{}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column,
                                std::string(e.description())));
  }
  Config c;
  c.source = origin;
  Reader top(root, "", origin);
  const toml::table* llm = top.sub("llm");
  top.no_unknown();
  if (!llm) return c;
  Reader r(*llm, "llm.", origin);
  std::string provider = "openai";
  r.get("provider", provider);
  set_provider(c, provider, origin);
  r.get("endpoint", c.endpoint);
  r.get("model", c.model);
  r.get("api_key_env", c.api_key_env);
  if (llm->get("api_key")) throw UserError(fmt::format("{}: llm.api_key: never put a key in a file; set api_key_env "
                                                       "to the name of the environment variable that holds it",
                                                       origin));
  r.get("stream", c.stream);
  r.get("max_reply_tokens", c.max_reply_tokens);
  r.get("temperature", c.temperature);
  r.get("timeout_s", c.timeout_s);
  r.get("connect_timeout_s", c.connect_timeout_s);
  r.get("max_retries", c.max_retries);
  r.get("backoff_base_s", c.backoff_base_s);
  r.get("backoff_cap_s", c.backoff_cap_s);
  r.get("concurrency", c.concurrency);
  r.get("max_reply_bytes", c.max_reply_bytes);
  r.get("coder_proposals", c.coder_proposals);
  r.get("profiler_kernels", c.profiler_kernels);
  r.get("tuner_configs", c.tuner_configs);
  if (const toml::table* b = r.sub("budget")) {
    Reader br(*b, "llm.budget.", origin);
    br.get("max_tokens", c.budget.max_tokens);
    br.get("max_cost", c.budget.max_cost);
    br.get("price_input_per_mtok", c.budget.price_input_per_mtok);
    br.get("price_output_per_mtok", c.budget.price_output_per_mtok);
    br.no_unknown();
  }
  r.no_unknown();
  return c;
}

void apply_env(Config& c) {
  if (const char* v = env("KERNELOPT_LLM_PROVIDER")) set_provider(c, v, "$KERNELOPT_LLM_PROVIDER");
  if (const char* v = env("KERNELOPT_LLM_ENDPOINT")) c.endpoint = v;
  if (const char* v = env("KERNELOPT_LLM_MODEL")) c.model = v;
  if (const char* v = env("KERNELOPT_LLM_API_KEY_ENV")) c.api_key_env = v;
  env_number("KERNELOPT_LLM_TIMEOUT_S", c.timeout_s);
  env_number("KERNELOPT_LLM_MAX_RETRIES", c.max_retries);
  env_number("KERNELOPT_LLM_CONCURRENCY", c.concurrency);
  env_number("KERNELOPT_LLM_BUDGET_TOKENS", c.budget.max_tokens);
  env_number("KERNELOPT_LLM_BUDGET_COST", c.budget.max_cost);
  if (const char* v = env("KERNELOPT_LLM_STREAM")) c.stream = std::string(v) != "0" && std::string(v) != "false";
}

Config load_config(const std::string& path) {
  std::string file = path;
  if (file.empty()) {
    if (const char* v = env("KERNELOPT_CONFIG")) file = v;
    else if (fs::is_regular_file("kernelopt.toml")) file = "kernelopt.toml";
  }
  Config c;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw UserError(fmt::format("{}: cannot read the config file; check --config or $KERNELOPT_CONFIG", file));
    std::stringstream ss;
    ss << in.rdbuf();
    c = parse_config(ss.str(), file);
  }
  apply_env(c);
  c.source = file.empty() ? "environment" : file;
  if (c.configured() && c.model.empty())
    throw UserError(fmt::format("{}: an endpoint is configured but no model; set llm.model or $KERNELOPT_LLM_MODEL",
                                c.source));
  if (c.concurrency < 1) throw UserError(fmt::format("{}: llm.concurrency must be at least 1", c.source));
  if (c.max_retries < 0) throw UserError(fmt::format("{}: llm.max_retries must be 0 or more", c.source));
  if (c.timeout_s <= 0) throw UserError(fmt::format("{}: llm.timeout_s must be positive", c.source));
  return c;
}

}  // namespace kopt::llm
