// The verification cascade for one candidate kernel: G1 static (engine), G2
// multi-seed correctness, G3 model-level with the float64 fallback, G4
// performance (worker). Gates run in order and the first failure stops the
// cascade; every gate leaves a record with its evidence, failures included —
// failures are data. Defaults and rules: docs/gates.md.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "worker/supervisor.h"

namespace kopt::verify {

struct CascadeOptions {
  int seeds = 5;                   // G2: fresh random inputs per seed, plus the real recorded ones
  double gamma = 1.03;             // G4: candidate must be at least this much faster
  double fp64_slack = 1.05;        // G3: candidate error vs float64 may exceed the baseline's by this factor
  int reps = 50;                   // G4 repetitions
  std::chrono::seconds timeout{600};  // per worker request
};

struct GateRecord {
  std::string gate;    // "G1", "G2", "G3", "G4"
  std::string status;  // "passed", "failed", "not_measured", "skipped"
  nlohmann::json evidence;
};

struct CascadeResult {
  bool accepted = false;
  bool performance_measured = false;  // G4 ran on a GPU (CPU mode never claims speed)
  std::string kernel, candidate_hash;
  std::vector<GateRecord> gates;
  nlohmann::json to_json() const;
};

CascadeResult run_cascade(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph, const ir::Kernel& kernel,
                          const std::string& candidate_source, const CascadeOptions& o);

// Hex XXH3-64 of a candidate's source: the key its records are stored under.
std::string source_hash(const std::string& source);

}  // namespace kopt::verify
