// `kernelopt optimize PROBLEM.py|BUNDLE`: the main job (pipeline/job.h), then a short summary of its
// report (or, with --json, report.json's object) on stdout.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "report/report.h"
#include "results/db.h"

namespace kopt::cli {

using nlohmann::json;

namespace {

// One line per kernel, the module's times, the job's peak memory, the headline note, the LLM agents' use.
void print_summary(const json& r) {
  const json& m = r["module"];
  bool measured = r.value("performance_measured", false);
  fmt::print("kernelopt optimize {} -> {}\n", r.value("bundle", ""), r.value("out_dir", ""));
  for (const json& k : r["kernels"]) {
    std::string status = k.value("accepted", false) ? "accepted " + k.value("chosen", std::string()) : "fallback";
    std::string speed = measured && k["speedup"].is_number() ? fmt::format(" {:.3f}x", k["speedup"].get<double>()) : "";
    fmt::print("  {:<60} {:<14} {}{}{}\n", k.value("name", "").substr(0, 60), k.value("family", ""), status, speed,
               k.value("note", "").empty() ? "" : " — " + k.value("note", ""));
  }
  if (measured && m["speedup"].is_number())
    fmt::print("module: {:.4f} ms -> {:.4f} ms ({:.3f}x)\n", m.value("baseline_ms", 0.0), m.value("optimized_ms", 0.0),
               m["speedup"].get<double>());
  else if (!measured)
    fmt::print("performance not measured (CPU mode): kernels replaced were verified for correctness only\n");
  if (std::string mem = report::detail::memory_line(r); !mem.empty()) fmt::print("{}\n", mem);
  if (!r.value("note", "").empty()) fmt::print("{}\n", r.value("note", ""));
  if (r.contains("llm") && r["llm"].is_object()) {
    const json& l = r["llm"];
    fmt::print("LLM agents: {} exchange(s), {} tokens, cost {:.4f}, {} kernel(s) won{}; transcripts in {}/{}\n",
               l.value("exchanges", 0), l.value("input_tokens", 0) + l.value("output_tokens", 0), l.value("cost", 0.0),
               l.value("kernels_won", 0), l["budget"].value("spent", false) ? " (budget spent)" : "",
               r.value("out_dir", ""), l.value("transcripts", ""));
  }
  fmt::print("wrote {0}/report.md, {0}/report.html, {0}/report.json\n", r.value("out_dir", ""));
}

}  // namespace

int optimize(const pipeline::OptimizeOptions& o) {
  results::ResultsDb db(o.db.empty() ? results::ResultsDb::default_path() : o.db);
  json report = pipeline::run_optimize(o, db);
  if (o.json) std::cout << report.dump(2) << "\n";
  else print_summary(report);
  return 0;
}

}  // namespace kopt::cli
