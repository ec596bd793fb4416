// The end-to-end gate (E2E): the whole re-stitched model against the baseline.
// Every accepted kernel passed G1-G4 alone; this gate checks what they do
// together in the model, once, on the final module(s): correctness by G3's rule
// (within tolerance of the baseline, else the float64 fallback), then performance
// by G4's rule on the whole model (optimized p80 <= baseline p20 / gamma), both
// timed interleaved through the same call path. CPU mode: correctness only,
// status "not_measured" (docs/gates.md).
#pragma once

#include <string>
#include <vector>

#include "artifact/bundle.h"
#include "verify/cascade.h"
#include "worker/supervisor.h"

namespace kopt::verify {

// `stitched_sources`: one full module text per graph of `b`, in order (a graph left as
// captured passes its original text). Returns gate "E2E" with status passed, failed or
// not_measured and evidence {correctness, baseline, optimized, speedup, gamma, ...}.
GateRecord end_to_end(worker::Supervisor& sup, const ir::Bundle& b, const std::vector<std::string>& stitched_sources,
                      const CascadeOptions& o);

}  // namespace kopt::verify
