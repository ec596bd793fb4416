// The engine's side of the worker protocol (docs/protocol.md): one function per op the engine sends,
// each taking a small request struct and returning the reply parsed (worker/replies.h), its `raw`
// kept for the evidence reports copy verbatim. Process-level failures come back as Supervisor::call
// makes them ({"ok": false, "failure": ...}): a reply with `ok` false, which callers keep as evidence
// or turn into an error (pipeline::must). Only the fields a struct holds are sent, exactly as the call
// sites sent them before, so the worker's own defaults apply to everything else.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "worker/replies.h"
#include "worker/supervisor.h"

namespace kopt::worker {

using Timeout = std::chrono::milliseconds;

// Every member has an initializer (`{}` at least) so that call sites may name only the fields they set
// (designated initializers) without -Wmissing-field-initializers.

// A kernel of a captured graph, at one of its recorded launches.
struct KernelAt {
  std::string bundle{};
  size_t graph = 0;
  std::string kernel{};
};

// run_kernel: the original kernel and the candidate on the same arguments (G2).
struct RunKernelRequest {
  KernelAt at;
  size_t launch = 0;
  std::string source{};
  std::vector<size_t> poison{};               // pure outputs, filled with `poison_fill` before each run
  std::string poison_fill = "nan";
  std::optional<int> seed{};                  // unset: the recorded inputs
  std::string inputs = "matched";           // how a seed's inputs are drawn; sent only when not "matched"
  bool repeat = false;                      // run twice on the same inputs (nondeterminism check)
  nlohmann::json tolerances{};                // the engine's (Tolerances::to_json)
  std::vector<size_t> scratch{};              // per-launch workspaces the comparison skips
  nlohmann::json config{};                    // a pinned config for the candidate (G2's small run); null: none
  nlohmann::json to_json() const;
};

// run_region: a region's host statements, the baseline module's against a candidate module's, on
// the same inputs, every region output compared (G2 of a fused region).
struct RegionBinding {
  std::string name{};    // the name the statements read
  std::string kernel{};  // from this kernel's (module variable) recorded launch ...
  size_t launch = 0;     // ... its n-th in the graph ...
  size_t arg = 0;        // ... at this argument
};
struct RunRegionRequest {
  std::string bundle{};
  size_t graph = 0;
  std::string source{};                     // the candidate module
  std::vector<std::string> original{};      // the baseline's region statements, verbatim
  std::vector<std::string> candidate{};     // the candidate's
  std::vector<RegionBinding> bindings{};
  std::vector<std::string> outputs{};       // the names compared after the run
  std::string poison_fill = "nan";
  std::optional<int> seed{};
  std::string inputs = "matched";
  bool repeat = false;
  nlohmann::json tolerances{};
  nlohmann::json to_json() const;
};

// compile_kernel: G1's `compiles`, at launch 0.
struct CompileKernelRequest {
  KernelAt at;
  std::string source{};
  nlohmann::json to_json() const;
};

// time_kernel: the original and the candidate timed on the recorded arguments (G4).
struct TimeKernelRequest {
  KernelAt at;
  std::string source{};
  int reps = 50;
  std::vector<size_t> poison{};
  nlohmann::json to_json() const;
};

// screen: many candidate sources compiled together and timed against the original (the search).
struct ScreenRequest {
  KernelAt at;
  std::vector<std::string> sources{};
  int reps = 10;
  std::vector<size_t> poison{};
  // Seconds the compiles may take: a source still compiling then is a record ("not screened"), so a batch of
  // slow compiles cannot run past the budget. Unset: wait for every compile.
  std::optional<double> compile_limit_s{};
  nlohmann::json to_json() const;
};

// run_module: the model with re-stitched modules, either every graph's (`sources`) or one graph's
// (`source` for graph `graph`).
struct RunModuleRequest {
  std::string bundle{};
  std::optional<std::vector<std::string>> sources{};
  std::optional<std::string> source{};
  size_t graph = 0;                         // with `source` only
  bool fp64 = false;                        // also against the float64 model (G3's rule)
  nlohmann::json tolerances{};                // the engine's (Tolerances::to_json)
  nlohmann::json to_json() const;
};

// time_module: the whole model, baseline against re-stitched modules (one text per graph).
struct TimeModuleRequest {
  std::string bundle{};
  std::vector<std::string> sources{};
  int reps = 50;
  nlohmann::json to_json() const;
};

// profile: the baseline module's per-kernel times.
struct ProfileRequest {
  std::string bundle{};
  int reps = 20;
  nlohmann::json to_json() const;
};

// bench_times: eager, torch.compile and (with `sources`) the optimized modules timed side by side.
struct BenchTimesRequest {
  std::string bundle{};
  int reps = 30;
  std::optional<std::vector<std::string>> sources{};
  nlohmann::json to_json() const;
};

// memory: sent to every worker, since device memory is per process.
struct MemoryRequest {
  bool reset_peak = false;
  nlohmann::json to_json() const;
};

// The ops that take the bundle alone, and those that take nothing.
nlohmann::json bundle_request(std::string_view op, const std::string& bundle);

Reply load_bundle(Supervisor& sup, const std::string& bundle, Timeout t);
RunBaselineReply run_baseline(Supervisor& sup, const std::string& bundle, Timeout t);
// `defer_host`: a reference that would run on the host (its float64 need passes the memory plan's soft target) is
// not made; the reply's `deferred` says why.
RunFp64Reply run_fp64(Supervisor& sup, const std::string& bundle, Timeout t, bool defer_host = false);
// capture: a problem file captured into the bundle `out` inside the worker (docs/protocol.md); raw fields
// `capture_seconds`, `capture_stages`, `eager_vs_compiled`, or the capture's one-line error.
Reply capture(Supervisor& sup, const nlohmann::json& req, Timeout t);
RecordLaunchesReply record_launches(Supervisor& sup, const std::string& bundle, Timeout t);
Reply ceilings(Supervisor& sup, Timeout t);
Reply forget_bundles(Supervisor& sup, Timeout t);
ProfileReply profile(Supervisor& sup, const ProfileRequest& r, Timeout t);
RunKernelReply run_kernel(Supervisor& sup, const RunKernelRequest& r, Timeout t);
RunKernelReply run_region(Supervisor& sup, const RunRegionRequest& r, Timeout t);  // the same reply's fields
CompileKernelReply compile_kernel(Supervisor& sup, const CompileKernelRequest& r, Timeout t);
TimedReply time_kernel(Supervisor& sup, const TimeKernelRequest& r, Timeout t);
ScreenReply screen(Supervisor& sup, const ScreenRequest& r, Timeout t);
RunModuleReply run_module(Supervisor& sup, const RunModuleRequest& r, Timeout t);
TimedReply time_module(Supervisor& sup, const TimeModuleRequest& r, Timeout t);
BenchTimesReply bench_times(Supervisor& sup, const BenchTimesRequest& r, Timeout t);
// One reply per worker, in slot order, as they came: worker/memory.cpp reads them leniently (a worker
// without these figures leaves the memory "not measured").
std::vector<nlohmann::json> memory(Supervisor& sup, const MemoryRequest& r, Timeout t);

}  // namespace kopt::worker
