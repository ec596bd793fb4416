// `kernelopt optimize PROBLEM.py|BUNDLE`: the main job (pipeline/job.h), then a short summary of its
// report (or, with --json, report.json's object) on stdout.
//
// A bundle without a Triton kernel leaves kernelopt nothing to do: the command says why and exits 2
// (README.md), so that a run that changed nothing is never mistaken for one that tried. A bundle given is
// checked before anything starts; a problem file's capture only after the job (which then kept the
// compiled module unchanged). `kernelopt bench` runs the job itself and records such a problem as a row.
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "artifact/bundle.h"
#include "cli/commands.h"
#include "report/report.h"
#include "results/db.h"
#include "util/error.h"

namespace kopt::cli {

using nlohmann::json;

namespace {

// One line per kernel, the module's times, the job's peak memory, the headline note, the LLM agents' use.
void print_summary(const json& r) {
  const json& m = r["module"];
  bool measured = r.value("performance_measured", false);
  fmt::print("kernelopt optimize {} -> {}\n", r.value("bundle", ""), r.value("out_dir", ""));
  for (const json& k : r["kernels"]) {
    std::string status = k.value("accepted", false) ? "accepted " + k.value("chosen", std::string())
                         : k.value("fused", false)  ? "fused"
                                                    : "fallback";
    std::string speed = measured && k["speedup"].is_number() ? fmt::format(" {:.3f}x", k["speedup"].get<double>()) : "";
    fmt::print("  {:<60} {:<14} {}{}{}\n", k.value("name", "").substr(0, 60), k.value("family", ""), status, speed,
               k.value("note", "").empty() ? "" : " — " + k.value("note", ""));
    if (std::string cfg = report::detail::winning_config(k); !cfg.empty()) fmt::print("    paste: {}\n", cfg);
  }
  for (const json& g : r.value("regions", json::array())) {
    if (!g.contains("fusion") || !g["fusion"]["chosen"].is_string()) continue;
    std::string kernel;
    for (const json& c : g["fusion"]["candidates"])
      if (c.value("id", "") == g["fusion"]["chosen"]) kernel = c.value("kernel", "");
    fmt::print("  region of graph {}: fused as {} — {}\n", g.value("graph", 0), kernel, g["fusion"].value("note", ""));
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

std::string no_triton_kernel(const ir::Bundle& bundle) {
  std::set<std::string> externs;
  for (const auto& g : bundle.graphs) {
    if (!g->kernels.empty()) return "";
    for (const ir::Function& f : g->functions)
      for (const ir::ExternCall& e : f.externs) externs.insert(e.op);
  }
  const std::string what = bundle.dir + ": no Triton kernel to optimize";
  // A model captured for Inductor's CPU backend; a kernel file captured in CPU mode keeps its Triton kernels.
  if (bundle.meta.value("device", "cuda") == "cpu" && bundle.meta.value("input_kind", "module") == "module")
    return fmt::format("{}: it was captured with --device cpu, where Inductor writes C++ kernels; capture the model "
                       "on a CUDA device (kernelopt capture {}/problem.py --out BUNDLE), or on this machine with "
                       "--device cpu --cpu-kernels triton, and optimize that bundle",
                       what, bundle.dir);
  return fmt::format("{}: Inductor called vendor/ATen code for the whole model ({}); kernelopt replaces "
                     "Inductor's Triton kernels only, so use the torch.compile'd model as it is",
                     what, externs.empty() ? "no call at all" : fmt::format("{}", fmt::join(externs, ", ")));
}

int optimize(const pipeline::OptimizeOptions& o) {
  if (ir::is_bundle_dir(o.target))
    if (std::string why = no_triton_kernel(*ir::load_bundle(o.target)); !why.empty()) throw UserError(why);
  results::ResultsDb db(o.db.empty() ? results::ResultsDb::default_path() : o.db);
  json report = pipeline::run_optimize(o, db);
  if (o.json) std::cout << report.dump(2) << "\n";
  else print_summary(report);
  if (const std::string bundle = report.value("bundle", ""); report["kernels"].empty() && ir::is_bundle_dir(bundle)) {
    // The problem file's capture held no Triton kernel: the job kept the compiled module as it was.
      if (std::string why = no_triton_kernel(*ir::load_bundle(bundle)); !why.empty()) throw UserError(why);
  }
  return 0;
}

}  // namespace kopt::cli
