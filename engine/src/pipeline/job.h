// The main job of `kernelopt optimize` (and of `bench`, once per problem): load (capture first when given a
// problem), workers, ceilings, baseline, launches, profile, plan, search, regions, stitch, end_to_end, write — a
// straight list of named, timed stages (pipeline/stages.h). A kernel whose candidates all fail keeps the
// compiler's kernel; if the stitched model fails its end-to-end gate, the whole result falls back to the
// baseline modules. Whatever happens, the output directory holds a loadable result and a report saying
// what was done and why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/agent.h"
#include "artifact/bundle.h"
#include "results/db.h"
#include "verify/cascade.h"
#include "worker/supervisor.h"

namespace kopt::pipeline {

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

// The main job without printing: returns report.json's object. `pool`: run on these workers
// (the suite runner keeps one pool for many problems) instead of starting the job's own.
nlohmann::json run_optimize(const OptimizeOptions& o, results::ResultsDb& db, worker::Supervisor* pool = nullptr);

// The main job's stages up to the plan (load, workers, launches, plan), with nothing timed or checked: no
// ceilings, no baseline check, no profile, so the built-in planner sees every launched kernel. For
// `kernelopt candidates`, which asks the coder what the search would start from. `o.target` must be a bundle.
struct PlannedBundle {
  std::unique_ptr<ir::Bundle> bundle;
  std::unique_ptr<worker::Supervisor> workers;
  std::vector<agents::KernelProfile> ranked;  // point into *bundle; the search's order
};
PlannedBundle plan_bundle(const OptimizeOptions& o, agents::Agents& agents);

}  // namespace kopt::pipeline
