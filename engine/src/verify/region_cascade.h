// The cascade for a fused region (docs/gates.md, "Regions"): the candidate is a whole module in
// which one fused kernel replaces several launches of a region.
//   G1: the host code is the original's plus the allowed edits, byte for byte; the fused launch
//       passes only the region's buffers and writes every output; the fused kernel's source passes
//       the static checks (region_host.h).
//   G2: the region's statements, the original's against the candidate's, on the region's inputs
//       (the recorded arguments twice — nondeterminism fails — then each seed, every allocation
//       poisoned), every region output compared (the worker's run_region).
//   G3: the model with the candidate module, by G3's rule.
//   G4: the whole model, baseline against the candidate module, by G4's rule (a region's time is
//       not one kernel's; CPU mode: not measured).
#pragma once

#include <string>

#include "artifact/bundle.h"
#include "verify/cascade.h"
#include "verify/region_host.h"

namespace kopt::verify {

struct RegionCascadeResult {
  CascadeResult cascade;                   // `kernel` is the fused kernel's name
  std::optional<stitch::RegionEdit> edit;  // the candidate as an edit (after G1 passed)
  std::optional<double> speedup;           // G4's, when measured: the model's baseline median / candidate median
  std::optional<double> saved_ms;          // G4's, when measured: baseline median - candidate median (per run)
};

// A region candidate timed briefly before its cascade (search/regions.cpp): G1 first (untrusted code runs only
// after it), then the whole model `reps` times, the baseline against the candidate module with the kept
// kernels pinned, as G4 times it. A candidate several times slower than the compiler's kernels (a cooperative
// split whose programs waited on each other: 210 ms against 27, session 36) then costs a compile and a few
// runs, not G2's seeds, G3's model and G4's 50 runs of it.
struct RegionScreen {
  GateRecord g1;                                  // failed: nothing was run
  std::optional<double> baseline_ms, candidate_ms;  // medians, when the worker timed them
};
RegionScreen screen_region(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph, const RegionFacts& facts,
                           const std::string& candidate_module, const CascadeOptions& o, int reps);

RegionCascadeResult run_region_cascade(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph,
                                       const RegionFacts& facts, const std::string& candidate_module,
                                       const CascadeOptions& o);

}  // namespace kopt::verify
