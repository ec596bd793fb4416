// One function per subcommand; main.cpp only wires them into CLI11. The work itself lies below, in
// pipeline/ (the main job, the bench's run and per-problem job, captures, workers) and the stages' own folders.
#pragma once

#include <string>
#include <vector>

#include "artifact/bundle.h"
#include "pipeline/bench_problem.h"
#include "pipeline/capture.h"
#include "pipeline/job.h"
#include "verify/cascade.h"

namespace kopt::cli {

struct InspectOptions {
  std::string target;  // bundle directory or module file
  bool json = false;
  std::string source;  // --source KERNEL: write that kernel's source (a candidate file) instead of the table
  std::string out;     // -o/--out with --source: the file written (default: stdout)
};
int inspect(const InspectOptions& o);

struct StitchOptions {
  std::string module;
  std::vector<std::string> replace;  // NAME=KERNEL.py
  std::string output;                // empty: stdout
};
int stitch(const StitchOptions& o);

// Runs the capture in place of this process (exec); pipeline/capture.h.
int capture(const pipeline::CaptureOptions& o);

// The main job (pipeline/job.h), then its summary printed or report.json on stdout. A bundle with no
// Triton kernel is refused (UserError, from no_triton_kernel).
int optimize(const pipeline::OptimizeOptions& o);
// Why `bundle` holds no Triton kernel (captured for Inductor's CPU backend, or Inductor called vendor/ATen
// code for all of it), as a one-line error with its fix; "" when it holds one.
std::string no_triton_kernel(const ir::Bundle& bundle);

struct CandidatesOptions {
  std::string bundle, out, device = "cuda", gpu = "0";
  int timeout_s = 600;
  bool quiet = false;
  bool regions_only = false;  // --regions: the region candidates alone, no worker (nothing is recorded)
};
// `kernelopt candidates BUNDLE --out DIR`: every candidate the built-in coder proposes, written to DIR
// without running any (tools/dump_candidates.py, docs/testing.md); the region candidates as whole modules.
int candidates(const CandidatesOptions& o);

// The suite runner (pipeline/bench_run.h), then its table printed (docs/bench.md); `json`: the object
// the reports render, on stdout instead.
int bench(const pipeline::BenchOptions& o, bool json = false);

struct BenchMergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  bool later_wins = false;  // a problem in several runs: the last run's row, instead of an error
  bool json = false;        // the merged object the reports render on stdout, instead of the table
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

}  // namespace kopt::cli
