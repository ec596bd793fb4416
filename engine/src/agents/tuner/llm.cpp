#include "agents/tuner/llm.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/llm/common.h"
#include "artifact/pin_config.h"
#include "verify/cascade.h"

namespace kopt::agents {

using nlohmann::json;

namespace {

bool pow2_in(const json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  int64_t n = v.get<int64_t>();
  return n >= lo && n <= hi && (n & (n - 1)) == 0;
}

std::vector<std::string> block_params(const ir::Kernel& k) {
  std::vector<std::string> out;
  for (const ir::KernelParam& p : k.signature)
    if (p.is_constexpr && p.name.size() > 5 && p.name.compare(p.name.size() - 5, 5, "BLOCK") == 0) out.push_back(p.name);
  return out;
}

}  // namespace

std::optional<json> check_suggested_config(const ir::Kernel& k, const json& base, const json& suggested,
                                           std::string* why) {
  auto no = [&](const std::string& w) -> std::optional<json> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (!suggested.is_object()) return no("a config is not an object");
  std::vector<std::string> blocks = block_params(k);
  json c = base.is_object() ? base : json::object();
  for (const auto& [key, v] : suggested.items()) {
    bool is_block = std::find(blocks.begin(), blocks.end(), key) != blocks.end();
    if (is_block ? !pow2_in(v, 1, 65536)
                 : key == "num_warps" ? !pow2_in(v, 1, 32)
                 : key == "num_stages" ? !(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 8)
                                       : true)
      return no(fmt::format("{}={} is not a valid setting of this kernel", key, v.dump()));
    c[key] = v;
  }
  for (const std::string& b : blocks)
    if (!c.contains(b)) return no("the config does not set " + b);
  if (!c.contains("num_warps")) c["num_warps"] = 4;
  if (!c.contains("num_stages")) c["num_stages"] = 1;
  return c;
}

std::vector<Candidate> LlmTuner::neighbours(const KernelProfile& k, const Candidate& accepted,
                                            const std::vector<std::string>& tried) {
  std::vector<Candidate> out = builtin_ ? builtin_->neighbours(k, accepted, tried) : std::vector<Candidate>{};
  std::vector<std::string> seen = tried;
  for (const Candidate& c : out) seen.push_back(verify::source_hash(c.source));
  auto [i, reply] = s_->ask("tuner", k.kernel->name,
                            {{"facts", llm_support::kernel_facts(k)},
                             {"candidate_origin", accepted.origin},
                             {"candidate_description", accepted.description},
                             {"candidate_source", accepted.source},
                             {"config", accepted.config.is_null() ? "Inductor's own" : accepted.config.dump()},
                             {"blocks", fmt::format("{}", fmt::join(block_params(*k.kernel), ", "))},
                             {"tried", std::to_string(tried.size())},
                             {"max_configs", std::to_string(s_->config().tuner_configs)}});
  if (!reply.ok) return out;
  auto j = llm_support::one_json_object(reply.text);
  if (!j.value || !(*j.value)["configs"].is_array()) {
    s_->settle(i, "unparsable", j.value ? "expected {\"configs\": [...]}" : j.reason);
    return out;
  }
  // A config of the original kernel must stay in its safe space (masks the code relies on).
  bool original_code = !accepted.config.is_null() && accepted.origin.rfind("template:", 0) != 0 &&
                       accepted.origin.rfind("llm:", 0) != 0;
  auto shape = k.launches.empty() ? std::nullopt : kernel_shape(*k.kernel, k.launches.front(), nullptr);
  std::vector<std::string> hashes, rejected;
  int taken = 0;
  for (const json& s : (*j.value)["configs"]) {
    if (taken >= s_->config().tuner_configs) break;
    std::string why;
    auto c = check_suggested_config(*k.kernel, accepted.config, s, &why);
    if (c && original_code && (!shape || !config_is_safe(*shape, *c))) c.reset(), why = "outside the safe config space";
    if (!c) {
      rejected.push_back(why);
      continue;
    }
    Candidate cand;
    try {
      cand.source = ir::pin_config(accepted.source, k.kernel->name, *c);
    } catch (const std::exception& e) {
      rejected.push_back(e.what());
      continue;
    }
    std::string h = verify::source_hash(cand.source);
    if (std::find(seen.begin(), seen.end(), h) != seen.end()) continue;
    seen.push_back(h), hashes.push_back(h), ++taken;
    cand.origin = "llm:tune", cand.config = *c, cand.parent = accepted.id;
    cand.description = "LLM config " + ir::describe_config(*c);
    out.push_back(std::move(cand));
  }
  s_->settle(i, hashes.empty() ? "unparsable" : "proposed",
             rejected.empty() ? "" : fmt::format("{} config(s) refused: {}", rejected.size(), rejected.front()), hashes);
  return out;
}

}  // namespace kopt::agents
