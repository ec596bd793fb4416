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

// The compared tensors of a comparison that match elementwise (|a - b| <= atol + rtol |b|) but whose largest
// difference exceeds rtol of the tensor's own scale (compare.py's `scaled`), each as the worker reported it;
// empty when none. G2 holds its runs on ordinary inputs (recorded, distribution-matched) to it: a tensor whose
// values all sit far below atol passes the elementwise rule whatever they are (a bf16 softmax over rows of 50K,
// each value near 2e-5, wrong by 58% of its scale against an atol of 0.01). Runs on symmetric, mirrored and
// special draws are not: their outputs may be rounding noise around zero, whose scale is that noise.
nlohmann::json beyond_scale(const nlohmann::json& comparison, const char* list);

// G2 failed on such a run: `summary` (the run's record) marked and appended to `runs`; the reason names `whose`
// outputs they differ from ("the original kernel's"), and the tensors go under `list_key`.
GateRecord failed_beyond_scale(nlohmann::json summary, nlohmann::json runs, nlohmann::json off_scale,
                               const std::string& whose, const char* list_key);

struct Verdict {
  bool passed = false;
  nlohmann::json evidence;
};

// Revised whenever a gate's rule changes: part of the results cache's key, so that no verdict reached under
// another rule is reused (2: the float64 rule's rounding floor; 3: G2's infinities at the edge of the range;
// 4: G2's order probe for NaN/Inf positions; 5: G2's elementwise matches on ordinary inputs held to their scale).
inline constexpr int kRulesRevision = 5;

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
