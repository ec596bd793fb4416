#include "agents/profiler/llm.h"

#include <set>

#include "agents/llm/common.h"
#include "agents/profiler/builtin.h"

namespace kopt::agents {

std::vector<KernelProfile> LlmProfiler::rank(std::vector<KernelProfile> kernels,
                                             const std::optional<nlohmann::json>& ceilings) {
  kernels = BuiltinProfiler().rank(std::move(kernels), ceilings);
  static const std::set<std::string> readings = {"memory", "compute", "latency", "unknown"};
  int asked = 0;
  for (KernelProfile& k : kernels) {
    if (asked >= s_->config().profiler_kernels) break;
    if (k.launches.empty()) continue;
    ++asked;
    auto [i, reply] = s_->ask("profiler", k.kernel->name, {{"facts", llm_support::kernel_facts(k)}});
    if (!reply.ok) {
      if (reply.not_sent) break;
      continue;
    }
    auto j = llm_support::one_json_object(reply.text);
    if (!j.value) {
      s_->settle(i, "unparsable", j.reason);
      continue;
    }
    std::string b = j.value->value("bottleneck", "");
    const nlohmann::json& e = (*j.value)["explanation"];
    if (!readings.count(b) || !e.is_string() || e.get<std::string>().empty()) {
      s_->settle(i, "unparsable", "expected {\"bottleneck\": memory|compute|latency|unknown, \"explanation\": text}");
      continue;
    }
    k.explanation = b + "-bound: " + e.get<std::string>().substr(0, 600);
    s_->settle(i, "proposed", "");
  }
  return kernels;
}

}  // namespace kopt::agents
