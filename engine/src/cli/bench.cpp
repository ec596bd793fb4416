// `kernelopt bench SUITE_DIR`: the suite runner (pipeline/bench_run.h), then the per-level table on
// stdout (docs/bench.md), or with --json the object the reports render.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "pipeline/bench_run.h"
#include "report/bench_report.h"

namespace kopt::cli {

int bench(const pipeline::BenchOptions& o, bool json) {
  pipeline::BenchRun run = pipeline::run_bench(o);
  if (json) {
    std::cout << run.bench.dump(2) << "\n";
  } else {
    std::cout << report::render_bench_terminal(run.bench) << "\n";
    std::cout << fmt::format("every column: report.md and report.html in {} (rows: results.jsonl)\n", run.out.string());
  }
  std::cerr << fmt::format("[bench] {} problem(s) ({} resumed) in {:.0f} s\n", run.problems, run.resumed,
                           run.seconds);
  return 0;
}

}  // namespace kopt::cli
