// The numeric rules the gates share, and how a worker reply becomes evidence.
// G3 and the end-to-end gate decide model-level correctness the same way; G4 and
// the end-to-end gate decide performance the same way (docs/gates.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "verify/cascade.h"
#include "worker/client.h"
#include "worker/replies.h"

namespace kopt::verify {

// A worker reply that failed at the process level (timeout, crash) or raised.
bool failed_reply(const worker::Reply& r);
// The failure as evidence: error, failure kind, stderr tail, and whether the worker was replaced.
nlohmann::json reply_evidence(const worker::Reply& r);
// The worst (largest) max_rel over a comparison's tensors (`list`: "args" or "outputs").
double worst_rel(const nlohmann::json& comparison, const char* list);

struct Verdict {
  bool passed = false;
  nlohmann::json evidence;
};

// Revised whenever a gate's rule changes: part of the results cache's key, so that no verdict reached under
// another rule is reused (2: the float64 rule's rounding floor; 3: G2's infinities at the edge of the range;
// 4: G2's order probe for NaN/Inf positions).
inline constexpr int kRulesRevision = 4;

// Two units in the last place of a floating dtype, relative to a magnitude (float32: 2^-22): below this
// a largest error against float64, taken relative to the output's largest magnitude, cannot tell two
// summation orders apart. 0 for a dtype not named (no floor).
double rounding_floor(const std::string& dtype);

// run_module for G3's rule (G3, a region's G3, the end-to-end gate, the bench's check): first without the
// float64 model (a run on upcast inputs and comparisons in float64: 67 s of G3 on a 5 GB fp16 RMS norm); within
// tolerance of the baseline, and the float64 rule not required (`fp64_only`), that answers. Otherwise, or
// when the float64 rule is required from the start, with it. The verdict is the same as one run with fp64.
worker::RunModuleReply model_run(worker::Supervisor& sup, worker::RunModuleRequest req, const CascadeOptions& o,
                                 bool fp64_only);

// A run_module reply judged: within tolerance of the baseline, or else no less
// accurate than the baseline against float64 (times o.fp64_slack, plus the baseline's own
// run-to-run spread, or plus the outputs' rounding floor, whichever is largest), NaN/Inf positions
// matching.
// `fp64_only`: the float64 rule decides even when the outputs are within tolerance of the baseline.
Verdict model_verdict(const worker::RunModuleReply& r, const CascadeOptions& o, bool fp64_only = false);

// Two timing summaries (timing.py) judged: candidate p80 <= baseline p20 / gamma (noise cannot
// pass), and no more device-synchronized time beyond event time than the baseline has (work
// hidden outside the timed stream). `name` labels the candidate in the evidence.
Verdict timing_verdict(const worker::Timing& baseline, const worker::Timing& candidate, double gamma,
                       const std::string& name);

}  // namespace kopt::verify
