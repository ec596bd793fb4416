// One problem of a suite run: the main job (run_optimize on the worker pool), then
// the result judged and timed by the bench itself, side by side with eager and
// torch.compile in one worker (docs/bench.md). Whatever fails becomes the row's
// status and reason; nothing here throws for a problem's own failure.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/suite.h"
#include "results/db.h"
#include "worker/supervisor.h"

namespace kopt::pipeline {

// `kernelopt bench`'s options (docs/bench.md): the suite runner's (bench_run.h), and each problem's job's.
struct BenchOptions {
  std::string suite, out, levels = "1,2,3", shard, gpus = "0", device = "cuda", db, agents = "builtin", mode = "default";
  double budget_s = 60;
  int timeout_s = 600, reps = 30;
  int capture_jobs = 4;  // problems captured ahead, this many at a time (0: each job captures its own)
  bool fresh = false, verbose = false;
};

struct BenchContext {
  const BenchOptions& options;
  std::filesystem::path out;  // the run directory
};

// OUT/problems/<id without .py>: the problem's result directory (its bundle in bundle/).
std::filesystem::path result_dir(const std::filesystem::path& out, const bench::Problem& p);

// When `bundle` is a complete capture of the problem file `problem` as it is now (the bundle's
// problem.py is the same bytes) with torch.compile mode `mode` — a capture made ahead of the job, or
// by an earlier attempt of this run — the seconds that capture took; otherwise nullopt.
std::optional<double> existing_capture(const std::filesystem::path& bundle, const std::string& problem,
                                       const std::string& mode);

// The chosen regions of a job's report.json, as a bench row names them (`fused`); none unless `changed`.
nlohmann::json fused_regions(const nlohmann::json& report, bool changed);

// The row (results.jsonl's format, docs/bench.md) for problem `p`, run on `sup` (one worker on
// GPU `gpu`, or the CPU worker). The job's result directory is OUT/problems/<id without .py>.
// `in_use_before`: the worker's device memory in use when the problem started, when it says
// (the suite runner compares it with what is left after forget_bundles).
nlohmann::json run_problem(const BenchContext& c, const bench::Problem& p, worker::Supervisor& sup,
                           results::ResultsDb& db, const std::string& gpu,
                           std::optional<int64_t>* in_use_before = nullptr);

// The object the bench reports render (report/bench_report.h): rows sorted by level and id, the
// per-level table, and what the run was (suite, settings, shards, how many problems it selected).
nlohmann::json bench_object(const std::string& suite, const nlohmann::json& settings, const nlohmann::json& shards,
                            size_t expected, std::vector<nlohmann::json> rows);

// The torch.compile module's GPU time per call with every Triton kernel at its roofline floor:
// `compiled_ms` less each profiled kernel's time above its floor (baseline_ms - floor_ms, both per
// run, all of the kernel's calls) from the job's report.json — and, for a region of two kernels or
// more whose kernels run in no other region, the region's time above its one-pass floor instead
// (issue 26: the floor fusion can reach). The excess is the profiler's (kernels timed alone), carried into
// `compiled_ms` in proportion to the report's module.triton_ms + vendor_ms where the report has them.
// nullopt when the report has no floors, or the kernels' isolated times add up to more than the module's
// (the estimate would be meaningless).
std::optional<double> module_floor_ms(const nlohmann::json& report, double compiled_ms);

// A failure's kind from its message: import, compile, oom, timeout, crash or error.
std::string failure_kind(const std::string& message);
// The same for a failed worker reply: its own `failure` when that names a kind (oom, timeout,
// crashed), else from `message`.
std::string failure_kind(const std::string& message, const nlohmann::json& reply);

}  // namespace kopt::pipeline
