// `kernelopt bench SUITE_DIR`'s run: the main job on every problem of a suite, each row
// judged and timed side by side with eager and torch.compile (pipeline/bench_problem.h), then the table
// (docs/bench.md). One worker per GPU of --gpus serves many problems (a thread per
// worker takes the next problem); every finished row is a record in the results
// database, written in its own transaction, under the run's id (DIR/run.json), so
// a killed run (kill -9 included) restarts where it stopped: finished problems are
// read back, not redone, and the search cache skips candidates measured before.
// DIR's reports are rewritten after every problem, so a stopped run still shows
// what it finished.
#pragma once

#include <cstddef>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "pipeline/bench_problem.h"

namespace kopt::pipeline {

struct BenchRun {
  nlohmann::json bench;        // bench_object of every problem of the shard, as DIR's reports render it
  std::filesystem::path out;   // DIR, the run directory
  size_t problems = 0, resumed = 0;  // the shard's problems, and those finished by an earlier run
  double seconds = 0;          // from the first job on (the captures made ahead not counted)
};

// Progress goes to stderr, a line per problem started and finished.
BenchRun run_bench(const BenchOptions& o);

}  // namespace kopt::pipeline
