// The main job's stages (pipeline/job.h), each a function of the job's state, run in this order by
// run_optimize: what one stage finds, the next ones read from the Job. Internal to pipeline/.
#pragma once

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/agent.h"
#include "artifact/bundle.h"
#include "pipeline/job.h"
#include "results/db.h"
#include "search/cost.h"
#include "search/regions.h"
#include "search/search.h"
#include "stitch/stitch.h"
#include "verify/cascade.h"
#include "worker/replies.h"
#include "worker/supervisor.h"

namespace kopt::pipeline {

struct Job {
  using Clock = std::chrono::steady_clock;

  explicit Job(const OptimizeOptions& opts) : o(opts) {}
  const OptimizeOptions& o;
  std::filesystem::path out;
  std::string bundle_dir;
  std::unique_ptr<ir::Bundle> bundle;
  std::unique_ptr<worker::Supervisor> owned;  // the job's own workers, unless given a pool (bench)
  worker::Supervisor* sup = nullptr;
  nlohmann::json hello = nlohmann::json::object();  // the first worker's hello (empty until the workers are up)
  nlohmann::json ceilings, baseline;  // baseline: run_baseline's reply, with vs_fp64 when it differs
  worker::ProfileReply profile;               // GPU only (raw null in CPU mode)
  nlohmann::json memory;  // report.json's "memory": peak device memory over the job (docs/report.md)
  std::map<std::string, std::vector<nlohmann::json>> launches;  // kernel name -> launch records
  stitch::Pins pins;  // kernel name -> the config the baseline's autotuner settled on (GPU)
  std::vector<agents::KernelProfile> ranked;
  std::vector<search::KernelOutcome> outcomes;
  std::vector<search::RegionOutcome> regions;  // every region of two launches or more, fusion tried or declined
  std::vector<std::string> stitched;  // one module text per graph
  std::optional<verify::GateRecord> e2e;
  bool changed = false;
  std::string fallback_note;
  nlohmann::json stages = nlohmann::json::array();
  Clock::time_point t0 = Clock::now();

  // The budget (docs/optimize.md, "The budget"): --budget seconds from when the workers are up and the
  // GPU's ceilings known to the report. No step starts whose estimate (search/cost.h) does not fit.
  Clock::time_point budget_end = Clock::time_point::max();
  search::CostInputs cost;
  std::string skip;  // set: the stages from the baseline on do not run, for this reason (a bundle too large)
  std::vector<std::string> not_tried;  // report.json's not_tried: what the budget or an interrupt left out, why
  int interrupted = 0;                 // the signal that interrupted the job
  std::string interrupted_in;          // the stage it was in

  bool gpu() const { return o.device != "cpu"; }
  std::chrono::seconds timeout() const { return o.gate.timeout; }
  double left_s() const { return std::chrono::duration<double>(budget_end - Clock::now()).count(); }
  // Plain lines carry the seconds since the job began, so a log shows where a slow job spent its time.
  void say(const std::string& what, bool heartbeat = false) const {
    std::lock_guard lock(say_mu);
    last_line = Clock::now();
    if (!heartbeat) last_said = last_line, last_text = what;
    if (!o.quiet)
      std::cerr << fmt::format("[kernelopt {:.1f}s] {}\n", std::chrono::duration<double>(Clock::now() - t0).count(),
                               what);
  }
  // A status line redrawn in place on a terminal (the search's bar) counts as said.
  void mark(const std::string& what) const {
    std::lock_guard lock(say_mu);
    last_line = last_said = Clock::now(), last_text = what;
  }
  // The last line printed, the last one not a heartbeat and its text: a long silent step gets "still working"
  // lines (job.cpp's Heartbeat).
  mutable std::mutex say_mu;
  mutable Clock::time_point last_line = Clock::now(), last_said = Clock::now();
  mutable std::string last_text;
};

// CPU mode, before the baseline: whether the bundle can finish in the interpreter inside the budget, from its
// sizes; says on stderr when it cannot (and what to do) and sets job.skip when not even the baseline fits.
void check_budget(Job& job);
// The kernels no search reached (the plan was never made, or an interrupt came first), each with `why`.
void add_unsearched(Job& job, const std::string& why);

// Load (capture first when given a problem) through plan: pipeline/stages_prepare.cpp.
void load(Job& job);
void start(Job& job, worker::Supervisor* pool);  // `pool`: the bench's workers, else the job starts its own
void ceilings(Job& job, results::ResultsDb& db);
void baseline(Job& job);
void record_launches(Job& job);
void profile(Job& job);
void plan(Job& job, agents::Agents& agents);

// Search through write: pipeline/stages_finish.cpp.
void search(Job& job, agents::Agents& agents, results::ResultsDb& db);
void regions(Job& job, agents::Agents& agents, results::ResultsDb& db);
void stitch_modules(Job& job);
void end_to_end(Job& job);
void write(Job& job);

}  // namespace kopt::pipeline
