// The five agent roles (docs/design.md, "The five agents"): one interface per role, with
// implementations side by side in agents/<role>/ and chosen by name from the
// registry (registry.cpp): built-in (agents/<role>/builtin.*), LLM
// (agents/<role>/llm.*, docs/llm.md), or hybrid, where both propose and compete.
//
// The roles only propose and rank. Nothing they produce reaches an output
// without passing the verification cascade, which the search runs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "profile/roofline.h"
#include "verify/cascade.h"

namespace kopt::llm {
class Session;
struct Config;
}  // namespace kopt::llm

namespace kopt::profile {
struct Region;
}  // namespace kopt::profile

namespace kopt::agents::fusion {
struct RegionPlan;
}  // namespace kopt::agents::fusion

namespace kopt::agents {

// What the profiler knows about one Triton kernel of the bundle.
struct KernelProfile {
  const ir::Kernel* kernel = nullptr;
  size_t graph = 0;
  std::string family;             // profile::family(): softmax, layer_norm, pooling, pointwise, ...
  std::vector<nlohmann::json> launches;  // the worker's launch records (argument shapes, dtypes)
  profile::Cost cost;             // bytes it must move, FLOPs it must do (all launches of one run)
  std::optional<double> floor_ms;     // from the measured ceilings (GPU only)
  std::optional<double> time_ms;      // measured per run inside the module (GPU only)
  double calls_per_run = 0;
  std::string bottleneck = "unknown";  // memory | compute | unknown
  std::string explanation;             // the LLM profiler's reading of the facts (LLM/hybrid agents)
  // Time above the floor: what optimizing this kernel can win at most (GPU only).
  std::optional<double> recoverable_ms() const {
    if (!time_ms || !floor_ms) return std::nullopt;
    return std::max(0.0, *time_ms - *floor_ms);
  }
};

// A proposed replacement for one kernel: a full kernel source (the launch site stays unchanged).
struct Candidate {
  std::string id;           // c1, c2, ... unique within a kernel
  std::string origin;       // config | template:<family> | rewrite | review | tune | llm:rewrite | llm:review | llm:tune
  std::string description;  // one line a person can read: "XBLOCK=8 R0_BLOCK=1024 num_warps=8"
  std::string source;
  nlohmann::json config;    // the pinned launch config, when the candidate is a config of some source
  // The kernel's own launch-config space applies to `source` (a rewrite that keeps its blocks and
  // launch grid, pinned to the baseline's config): the tuner and reviewer re-pin `source` itself.
  bool own_config_space = false;
  std::string parent;       // the candidate it was derived from (tuner, reviewer); empty for the coder's
  // Screened after every other strategy's candidates, not in the round-robin: a kind that compiles for
  // seconds and measured behind the launch configs it would otherwise displace from the budget.
  bool screen_last = false;
};

// What the planner decided for one kernel.
struct Plan {
  std::vector<std::string> strategies;  // "config", "template:<family>", "rewrite:source", "rewrite" (LLM coder)
  std::vector<std::string> ideas;       // the LLM planner's ideas, handed to the LLM coder
  std::string note;                     // why a kernel is not searched, when it is not
  // Why a strategy that was tried gave nothing: the template's decline, each source rewrite's
  // ("template:softmax: the kernel fuses aten.where with the softmax"). In report.json as `declined`.
  std::vector<std::string> declined;
  // What the built-in coder made while the planner asked it which strategies give anything, per
  // strategy ("template:softmax", "rewrite:source"): the coder proposes these instead of building
  // them again.
  std::map<std::string, std::vector<Candidate>> built;
};

class Profiler {
 public:
  virtual ~Profiler() = default;
  // Fills bytes/FLOPs/floor/bottleneck from the launches and ceilings, and ranks the kernels,
  // most recoverable time first.
  virtual std::vector<KernelProfile> rank(std::vector<KernelProfile> kernels,
                                          const std::optional<nlohmann::json>& ceilings) = 0;
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual Plan plan(const KernelProfile& k) = 0;
};

// A region of call() (profile/regions.h) as the coder's unit beside the kernel: several launches
// one fused kernel may replace (docs/optimize.md, "Regions").
struct RegionUnit {
  const ir::Artifact* art = nullptr;
  const ir::Function* f = nullptr;
  const profile::Region* region = nullptr;
  size_t graph = 0, index = 0;                // the region's graph, its place among the graph's regions
  std::map<std::string, std::string> winners;  // kernel name -> the per-kernel search's chosen source
  // Kernel name -> the launch config Inductor's autotuner settled on in the baseline (stitch::Pins): a
  // fused kernel built on a kernel's own source runs under that kernel's config, not a fresh autotune.
  std::map<std::string, nlohmann::json> pins;
};

class Coder {
 public:
  virtual ~Coder() = default;
  // Candidates for the plan's strategies, most promising first.
  virtual std::vector<Candidate> propose(const KernelProfile& k, const Plan& p) = 0;
  // Fused candidates for a region, tried in order, with what declined and why.
  virtual fusion::RegionPlan propose_region(const RegionUnit& u) = 0;
};

class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // A repaired candidate from the failed one and its gate evidence, or nothing.
  virtual std::optional<Candidate> repair(const KernelProfile& k, const Candidate& failed,
                                          const verify::CascadeResult& result) = 0;
};

class Tuner {
 public:
  virtual ~Tuner() = default;
  // Launch configs near an accepted candidate's, not yet in `tried` (candidate source hashes).
  virtual std::vector<Candidate> neighbours(const KernelProfile& k, const Candidate& accepted,
                                            const std::vector<std::string>& tried) = 0;
};

struct Agents {
  std::unique_ptr<Profiler> profiler;
  std::unique_ptr<Planner> planner;
  std::unique_ptr<Coder> coder;
  std::unique_ptr<Reviewer> reviewer;
  std::unique_ptr<Tuner> tuner;
  std::string name;                    // builtin | llm | hybrid
  std::shared_ptr<llm::Session> llm;   // the LLM session (client, transcript) when name != builtin
};

// The agents for `--agents NAME`: builtin, llm or hybrid; "" picks hybrid when `config` has an
// endpoint, else builtin. Throws UserError naming the known names, or the missing endpoint.
Agents make_agents(const std::string& name, const llm::Config* config = nullptr);

}  // namespace kopt::agents
