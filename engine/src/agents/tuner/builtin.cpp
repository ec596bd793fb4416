// Built-in tuner: coordinate steps around an accepted candidate's launch
// config (each block size, num_warps and num_stages doubled or halved), the
// configs the coder's first sweep did not already try; and, for a launch config
// of the kernel's own source, its loading loops pipelined at that config.
#include "agents/tuner/builtin.h"

#include <algorithm>

#include "agents/coder/builtin.h"
#include "agents/coder/config_space.h"
#include "agents/coder/rewrites/rewrites.h"
#include "verify/cascade.h"

namespace kopt::agents {

std::vector<Candidate> BuiltinTuner::neighbours(const KernelProfile& k, const Candidate& accepted,
                                                const std::vector<std::string>& tried) {
  // Templates and rewrites that pin configs of their own (the single pass) come with their own
  // launch configs; the config space here is the original kernel's, which also serves a rewrite
  // that keeps the kernel's blocks (re-pinned on the rewrite's source).
  if (accepted.config.is_null() || accepted.origin.rfind("template:", 0) == 0) return {};
  if (accepted.origin == "rewrite" && !accepted.own_config_space) return {};
  auto shape = kernel_shape(*k.kernel, k.launches.front(), nullptr);
  if (!shape) return {};
  std::vector<Candidate> out;
  auto fresh = [&](Candidate&& c) {
    bool seen = std::find(tried.begin(), tried.end(), verify::source_hash(c.source)) != tried.end();
    if (!seen) out.push_back(std::move(c));
  };
  const Candidate* base = accepted.own_config_space ? &accepted : nullptr;
  for (Candidate& c : config_candidates(k, config_neighbours(*shape, accepted.config), "tune", accepted.id, base))
    fresh(std::move(c));
  // A launch config of the kernel's own source: its loading loops pipelined (`tl.range(..., num_stages=)`,
  // rewrites::loop_stages) at that config. The coder pins the rewrite to Inductor's config only, and the
  // launch's num_stages does not pipeline them: session 32's looped scans ran 1.5x faster pipelined at
  // Inductor's tile while the config search found a tile 2x faster that was never pipelined.
  if (!base)
    for (auto& [description, source] : rewrites::loop_stages(k.kernel->source, k.kernel->name, nullptr)) {
      Candidate stages;
      stages.origin = "rewrite";
      stages.description = description;
      stages.source = source;
      for (Candidate& c : config_candidates(k, {accepted.config}, "tune", accepted.id, &stages)) fresh(std::move(c));
    }
  return out;
}

}  // namespace kopt::agents
