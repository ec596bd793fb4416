// The report object of `kernelopt optimize` (docs/report.md) built from what the
// job's stages found.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "pipeline/job.h"
#include "search/regions.h"
#include "search/search.h"
#include "verify/cascade.h"

namespace kopt::pipeline {

struct ReportInputs {
  const OptimizeOptions& options;
  std::filesystem::path out;
  std::string bundle_dir;
  const ir::Bundle& bundle;
  const nlohmann::json& hello;
  const nlohmann::json& ceilings;  // the worker's ceilings (null in CPU mode)
  const nlohmann::json& baseline;  // run_baseline's reply
  const nlohmann::json& profile;   // profile's reply (null in CPU mode)
  const std::vector<search::KernelOutcome>& outcomes;
  const std::vector<search::RegionOutcome>& regions;  // fusion tried per region (search/regions.h)
  const std::optional<verify::GateRecord>& e2e;
  bool changed;
  std::string fallback_note;
  const nlohmann::json& stages;
  double elapsed_s;
  nlohmann::json memory;  // worker::memory_summary of the job; null: not measured
};

nlohmann::json build_report(const ReportInputs& in);

// A gate record's one-line summary for the reports: the numbers the gate judged (G2: the first differing
// argument's error and its bound; G3: the error against float64 and the error allowed; G4: the speedup and the
// timing comparison), else its reason, failed finding or rule.
std::string gate_summary(const nlohmann::json& gate);

// The note of an accepted kernel still above 1.3x its floor (`optimized_ms` against p.floor_ms): why,
// where the profile knows (a gather the floor counts once), else that no faster safe variant was found.
std::string above_floor_note(const agents::KernelProfile& p, double optimized_ms);

}  // namespace kopt::pipeline
