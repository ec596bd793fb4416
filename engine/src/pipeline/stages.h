// The main job's stages (pipeline/job.h), each a function of the job's state, run in this order by
// run_optimize: what one stage finds, the next ones read from the Job. Internal to pipeline/.
#pragma once

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/agent.h"
#include "artifact/bundle.h"
#include "pipeline/job.h"
#include "results/db.h"
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
  nlohmann::json hello, ceilings, baseline;  // baseline: run_baseline's reply, with vs_fp64 when it differs
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

  bool gpu() const { return o.device != "cpu"; }
  std::chrono::seconds timeout() const { return o.gate.timeout; }
  // Plain lines carry the seconds since the job began, so a log shows where a slow job spent its time.
  void say(const std::string& what) const {
    if (!o.quiet)
      std::cerr << fmt::format("[kernelopt {:.1f}s] {}\n", std::chrono::duration<double>(Clock::now() - t0).count(),
                               what);
  }
};

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
void regions(Job& job, results::ResultsDb& db);
void stitch_modules(Job& job);
void end_to_end(Job& job);
void write(Job& job);

}  // namespace kopt::pipeline
