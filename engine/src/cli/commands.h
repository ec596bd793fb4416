// One function per subcommand; main.cpp only wires them into CLI11.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "report/results_db.h"
#include "verify/cascade.h"
#include "worker/supervisor.h"

namespace kopt::cli {

struct InspectOptions {
  std::string target;  // bundle directory or module file
  bool json = false;
};
int inspect(const InspectOptions& o);

struct StitchOptions {
  std::string module;
  std::vector<std::string> replace;  // NAME=KERNEL.py
  std::string output;                // empty: stdout
};
int stitch(const StitchOptions& o);

struct CaptureOptions {
  std::string problem, out, mode, device, dtype;
  std::string gpu;  // CUDA_VISIBLE_DEVICES for the capture process; empty: inherited
  int seed = 0;
  int timeout_s = 0;  // capture_and_wait: stop the capture (its whole process group) after this; 0: no limit
  bool force = false;
  bool autotune_cache = true;  // false: --no-autotune-cache (the module's loader times launch configs itself)
};
int capture(const CaptureOptions& o);          // replaces the process (exec)
// Runs it as a child and returns its exit code. With `error_line`, the child's output goes to
// this process's stderr (stdout stays free) and its last "error:" line is kept there.
int capture_and_wait(const CaptureOptions& o, std::string* error_line = nullptr);
// A Triton or Helion kernel file (no top-level Model, as worker/kernel_files.py's input_kind decides,
// docs/inputs.md): captured by running its own kernels, which the interpreter can do in CPU mode.
bool is_kernel_file(const std::string& path);

struct OptimizeOptions {
  std::string target, out, device = "cuda", gpus = "0", db, dtype, mode = "default";
  std::string agents;  // builtin | llm | hybrid; "": hybrid when an LLM endpoint is configured, else builtin
  std::string config;  // the LLM config file (--config; docs/llm.md)
  double budget_s = 60;
  int max_cascades = -1;  // -1: 3 on a GPU, 1 in CPU mode
  // The gates' settings (--seeds, --gamma, the tolerances; cli/gate_flags.h). `gate.timeout` (--timeout)
  // bounds every worker request of the job, the capture included; the job sets the pins.
  verify::CascadeOptions gate;
  bool json = false, quiet = false;
};
int optimize(const OptimizeOptions& o);
// The main job without printing: returns report.json's object. `pool`: run on these workers
// (the suite runner keeps one pool for many problems) instead of starting the job's own.
nlohmann::json run_optimize(const OptimizeOptions& o, report::ResultsDb& db, worker::Supervisor* pool = nullptr);

// The main job's stages up to the plan (load, workers, launches, plan), with nothing timed or checked: no
// ceilings, no baseline check, no profile, so the built-in planner sees every launched kernel. For
// `kernelopt candidates`, which asks the coder what the search would start from. `o.target` must be a bundle.
struct PlannedBundle {
  std::unique_ptr<ir::Bundle> bundle;
  std::unique_ptr<worker::Supervisor> workers;
  std::vector<agents::KernelProfile> ranked;  // point into *bundle; the search's order
};
PlannedBundle plan_bundle(const OptimizeOptions& o, agents::Agents& agents);

struct CandidatesOptions {
  std::string bundle, out, device = "cuda", gpu = "0";
  int timeout_s = 600;
  bool quiet = false;
};
// `kernelopt candidates BUNDLE --out DIR`: every candidate the built-in coder proposes, written to DIR
// without running any (tools/dump_candidates.py, docs/testing.md).
int candidates(const CandidatesOptions& o);

struct BenchOptions {
  std::string suite, out, levels = "1,2,3", shard, gpus = "0", device = "cuda", db, agents = "builtin", mode = "default";
  double budget_s = 60;
  int timeout_s = 600, reps = 30;
  int capture_jobs = 4;  // problems captured ahead, this many at a time (0: each job captures its own)
  bool fresh = false, verbose = false;
};
int bench(const BenchOptions& o);  // docs/bench.md

struct BenchMergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool later_wins = false;  // a problem in several runs: the last run's row, instead of an error
};
int bench_merge(const BenchMergeOptions& o);

struct LlmCheckOptions {
  std::string config;
  bool json = false;
};
// `kernelopt llm check`: one tiny request to the configured endpoint; latency, model, ok or why not.
int llm_check(const LlmCheckOptions& o);

struct ParseOptions {
  std::string file;
  bool dump = false, print = false;
};
int parse(const ParseOptions& o);

struct ProfileOptions {
  std::string bundle, device = "cuda", gpu = "0", db;
  int reps = 20, timeout_s = 600;
  bool json = false, quiet = false;
};
int profile(const ProfileOptions& o);

struct VerifyOptions {
  std::string bundle, kernel, candidate, device = "cuda", gpu = "0", db;
  // --seeds, --gamma, --reps, the tolerances (cli/gate_flags.h) and --timeout; the command sets the pins.
  verify::CascadeOptions gate;
  bool json = false, quiet = false;
};
int verify(const VerifyOptions& o);

// The Python interpreter that runs the worker: $KERNELOPT_PYTHON or python3.
std::string python_executable();

// One worker for `device` ("cuda" on GPU `gpu`, or "cpu"); start-up failures are UserErrors.
std::unique_ptr<worker::Supervisor> start_worker(const std::string& device, const std::string& gpu);
// A worker reply the command cannot do without: returned when ok, otherwise a one-line
// UserError naming what failed and why.
nlohmann::json must(const nlohmann::json& reply, const std::string& what);

// The measured ceilings of the worker's GPU, from the results database when this GPU model and
// these versions were measured before, else measured now (`say` announces it) and stored.
nlohmann::json gpu_ceilings(worker::Supervisor& sup, report::ResultsDb& db, std::chrono::seconds timeout,
                            const std::function<void(const std::string&)>& say);

// One worker per GPU in `gpus` ("0,1,3"), or one CPU worker.
std::unique_ptr<worker::Supervisor> start_workers(const std::string& device, const std::vector<std::string>& gpus);

}  // namespace kopt::cli
