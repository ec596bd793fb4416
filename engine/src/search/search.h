// The search for one kernel: the coder's candidates are screened (timed
// briefly against the original, GPU only), the fastest go through the full
// cascade, the tuner refines the accepted one, the reviewer repairs candidates
// that did not compile or run. Every candidate and its outcome is kept for the
// report; results are cached in the results database under the candidate,
// kernel, launch shapes, GPU and software versions, so re-running a job
// measures nothing new. The kernel falls back to the compiler's whenever
// nothing is accepted.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "profile/roofline.h"
#include "results/db.h"
#include "search/cost.h"
#include "search/outcome.h"
#include "verify/cascade.h"
#include "worker/supervisor.h"

namespace kopt::search {

struct SearchOptions {
  bool gpu = true;               // false: CPU mode, nothing is timed and no speed is claimed
  size_t max_cascades = 3;       // full cascades per kernel for the coder's candidates (plus tuning)
  size_t tune_rounds = 2;        // tuner rounds around the accepted candidate
  int screen_reps = 10;
  double near_floor = profile::kNearFloor;  // stop tuning once a kernel is within this factor of its floor
  // The search's end: the job's budget less what the stages after it need (pipeline/stages_finish.cpp).
  // No cascade starts whose estimate (cost) does not fit before it, unless `first_cascade_always` (the user
  // gave --max-cascades) and the kernel has had none yet.
  std::chrono::steady_clock::time_point deadline;
  CostInputs cost;
  bool first_cascade_always = false;
  // No G2 run starts after this (verify::CascadeOptions::stop_at): the budget's hard end, past `deadline`.
  std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
  verify::CascadeOptions cascade;
  std::string cache_prefix;      // GPU model and versions: part of every cache key
};

struct CandidateRecord {
  agents::Candidate candidate;
  std::string hash;
  Outcome outcome = Outcome::not_run;
  std::optional<double> screen_ratio;   // candidate / baseline median when screened
  std::string screen_error;
  std::string not_run;  // why a candidate next in line got no cascade (the budget, an interrupt)
  std::optional<verify::CascadeResult> result;
  bool cached = false;
};

struct KernelOutcome {
  agents::KernelProfile profile;
  agents::Plan plan;
  std::vector<CandidateRecord> candidates;
  std::optional<size_t> chosen;            // index into candidates
  std::optional<double> speedup;           // G4's baseline / candidate median (GPU only)
  std::string note;
  double seconds = 0;
};

// The search's first step alone: the planner's plan, then the coder's candidates with duplicates dropped
// and ids given (c1, c2, ...), nothing run. A kernel with no strategy gets its "not searched" note.
// `kernelopt candidates` writes exactly these, so a refactoring can be checked to propose the same.
KernelOutcome propose(agents::Agents& agents, const agents::KernelProfile& k);

// Among the kernels with a chosen candidate, the one expected to save the least time per model run
// (its profiled time per run, all of its calls, x (1 - 1/G4 speedup); unknown counts as 0, the last such
// kernel first): the one the end-to-end gate's retry leaves out first. nullopt with fewer than two.
std::optional<size_t> least_saving_accepted(const std::vector<KernelOutcome>& outcomes);

// Serialises database access from the search threads.
struct Cache {
  results::ResultsDb& db;
  std::mutex mu;
};

using Progress = std::function<void(const std::string&)>;

KernelOutcome search_kernel(worker::Supervisor& sup, const ir::Bundle& bundle, agents::Agents& agents,
                            const agents::KernelProfile& k, const SearchOptions& o, Cache& cache,
                            const Progress& progress);

nlohmann::json candidate_json(const CandidateRecord& r);

}  // namespace kopt::search
