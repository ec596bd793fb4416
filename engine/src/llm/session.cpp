#include "llm/session.h"

#include <fmt/format.h>

namespace kopt::llm {

using nlohmann::json;

std::pair<size_t, Reply> Session::ask(const std::string& role, const std::string& kernel,
                                      const std::map<std::string, std::string>& vars) {
  Prompt system = prompt("system"), p = prompt(role);
  // The template's first line (role and version) is kept: it is also how a person (or a
  // scripted test server) tells the requests apart.
  std::string text = render(p.text, vars);
  std::string sys = system.text.substr(system.text.find('\n') + 1);
  Reply r = client_.send({{"system", sys}, {"user", text}});
  Exchange e;
  e.role = role, e.prompt_version = p.version, e.kernel = kernel, e.prompt = text;
  // A malformed reply has no text: the transcript keeps what the endpoint sent instead (marked).
  e.reply = r.malformed ? r.raw : std::move(r.text);
  e.meta = r;
  e.meta.raw.clear();  // it is `reply`
  if (!r.malformed) r.text = e.reply;
  if (r.not_sent) e.outcome = "refused", e.reason = r.error;
  else if (!r.ok) e.outcome = "failed", e.reason = r.error;
  std::lock_guard lock(mu_);
  log_.push_back(std::move(e));
  return {log_.size() - 1, r};
}

void Session::settle(size_t i, const std::string& outcome, const std::string& reason,
                     const std::vector<std::string>& hashes) {
  std::lock_guard lock(mu_);
  Exchange& e = log_.at(i);
  e.outcome = outcome, e.reason = reason, e.candidates = hashes;
}

std::vector<std::string> Session::history(const std::string& kernel, const std::string& role) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const Exchange& e : log_)
    if (e.kernel == kernel && e.role == role && e.outcome != "pending")
      out.push_back(fmt::format("- an earlier reply: {}{}", e.outcome, e.reason.empty() ? "" : " (" + e.reason + ")"));
  return out;
}

std::vector<Exchange> Session::exchanges() const {
  std::lock_guard lock(mu_);
  return log_;
}

json exchange_json(const Exchange& e) {
  const Reply& m = e.meta;
  return {{"role", e.role},
          {"prompt_version", e.prompt_version},
          {"kernel", e.kernel},
          {"outcome", e.outcome},
          {"reason", e.reason},
          {"candidates", e.candidates},
          {"model", m.model},
          {"finish", m.finish},
          {"http_status", m.http_status},
          {"attempts", m.attempts},
          {"latency_s", m.latency_s},
          {"input_tokens", m.input_tokens},
          {"output_tokens", m.output_tokens},
          {"tokens_estimated", m.tokens_estimated},
          {"cost", m.cost},
          {"prompt", e.prompt},
          {"reply", e.reply},
          {"reply_malformed", m.malformed}};
}

std::string Session::jsonl() const {
  std::string out;
  for (const Exchange& e : exchanges()) out += exchange_json(e).dump() + "\n";
  return out;
}

}  // namespace kopt::llm
