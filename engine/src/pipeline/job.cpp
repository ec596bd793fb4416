// The main job (pipeline/job.h): its stages (pipeline/stages.h) run in order, each timed; then the
// reports, and the job's record in the results database.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <fmt/format.h>

#include "llm/config.h"
#include "llm/session.h"
#include "pipeline/job.h"
#include "pipeline/llm_report.h"
#include "pipeline/optimize_report.h"
#include "pipeline/stages.h"
#include "report/report.h"
#include "util/error.h"
#include "worker/memory.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Runs one stage and adds its name and seconds to the report's `stages`.
template <class F>
void stage(Job& job, const std::string& name, F&& body) {
  auto t = Clock::now();
  body();
  double s = std::chrono::duration<double>(Clock::now() - t).count();
  job.stages.push_back({{"name", name}, {"seconds", s}});
}

}  // namespace

PlannedBundle plan_bundle(const OptimizeOptions& o, agents::Agents& agents) {
  Job job{o};
  load(job);
  start(job, nullptr);
  record_launches(job);
  plan(job, agents);
  return {std::move(job.bundle), std::move(job.owned), std::move(job.ranked)};
}

json run_optimize(const OptimizeOptions& o, results::ResultsDb& db, worker::Supervisor* pool) {
  if (o.device != "cuda" && o.device != "cpu") throw UserError("--device " + o.device + ": use cuda or cpu");
  if (o.budget_s <= 0) throw UserError("--budget must be a positive number of seconds");
  // The LLM config is read unless the built-in agents were asked for by name: with no --agents,
  // a configured endpoint makes the run hybrid.
  llm::Config llm_config;
  if (o.agents != "builtin") llm_config = llm::load_config(o.config);
  agents::Agents agents = agents::make_agents(o.agents, &llm_config);
  Job job{o};
  fs::path target(o.target);
  job.out = !o.out.empty() ? fs::path(o.out)
                           : fs::path(target.filename().string().empty() ? target.parent_path().filename() : target.stem())
                                 .concat(".kernelopt");

  // A problem file is captured in a process of its own (torch.compile, tens of seconds on a GPU): the
  // workers start meanwhile, so the "workers" stage is only what is left to wait for after the capture.
  bool overlap = !pool && job.gpu() && !ir::is_bundle_dir(o.target) && target.extension() == ".py";
  std::future<void> workers;
  if (overlap) workers = std::async(std::launch::async, [&] { start(job, pool); });
  try {
    stage(job, "load", [&] { load(job); });
  } catch (...) {
    if (workers.valid()) workers.wait();  // the workers' thread writes into job: let it finish first
    throw;
  }
  stage(job, "workers", [&] { overlap ? workers.get() : start(job, pool); });
  stage(job, "ceilings", [&] { ceilings(job, db); });
  stage(job, "baseline", [&] { baseline(job); });
  stage(job, "launches", [&] { record_launches(job); });
  stage(job, "profile", [&] { profile(job); });
  stage(job, "plan", [&] { plan(job, agents); });
  stage(job, "search", [&] { search(job, agents, db); });
  stage(job, "regions", [&] { regions(job, db); });
  stage(job, "stitch", [&] { stitch_modules(job); });
  stage(job, "end_to_end", [&] { end_to_end(job); });
  json report;
  stage(job, "write", [&] {
    // Read before the reports: a worker that does not answer leaves the figure "not measured".
    job.memory = worker::memory_summary(worker::read_memory(*job.sup, false), worker::compiled_peak_of(job.baseline));
    write(job);
    report = build_report({job.o, job.out, job.bundle_dir, *job.bundle, job.hello, job.ceilings, job.baseline,
                           job.profile.raw, job.outcomes, job.regions, job.e2e, job.changed, job.fallback_note, job.stages,
                           std::chrono::duration<double>(Clock::now() - job.t0).count(), job.memory});
    report["agents"] = agents.name;
    if (agents.llm) {
      // Every exchange with the LLM, kept with the run (prompts and replies; never the key).
      const std::string name = "transcripts.jsonl";
      std::ofstream t(job.out / name, std::ios::binary | std::ios::trunc);
      t << agents.llm->jsonl();
      if (!t) throw UserError(fmt::format("{}: cannot write; check --out", (job.out / name).string()));
      report["llm"] = llm_summary(*agents.llm, job.outcomes, name);
    }
    report::write_reports(report, job.out);
  });
  db.add_record("optimize", job.bundle_dir, report);
  return report;
}

}  // namespace kopt::pipeline
