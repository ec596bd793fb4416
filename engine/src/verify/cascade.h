// The verification cascade for one candidate kernel: G1 static (engine), G2
// multi-seed correctness, G3 model-level with the float64 fallback, G4
// performance (worker). Gates run in order and the first failure stops the
// cascade; every gate leaves a record with its evidence, failures included —
// failures are data. Defaults and rules: docs/gates.md.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "stitch/stitch.h"
#include "verify/gate_status.h"
#include "worker/supervisor.h"

namespace kopt::verify {

// Gate settings. Every default of the cascade and the end-to-end gate is written here once:
// `kernelopt verify` and `kernelopt optimize` register their gate flags from these values
// (cli/gate_flags.h), the bench's run settings read them, and docs/gates.md's table states them.
// The worker's own defaults (python/kernelopt/worker/measure/compare.py) must equal `Tolerances`'s:
// tests/python/test_cli.py pins the two (and the docs table) together.

// Comparison tolerances per dtype, sent to the worker with every comparing request
// (compare.py: elementwise |a-b| <= atol + rtol*|b| at G2; max|a-b| <= rtol * max|b|
// at the model level). fp64 uses the fp32 pair; "half" is fp16 and bf16.
struct Tolerances {
  // fp32 (and fp64): loose enough for a changed schedule (other block sizes, another accumulation
  // order moves a reduction by rounding), tight enough that a precision downgrade fails: an fp16
  // round trip inside an fp32 kernel errs by ~1e-3 (tests/error, test_error_suite.py).
  double atol_fp32 = 1e-4, rtol_fp32 = 1e-4;
  // fp16/bf16: an output holds 8 (bf16) or 11 (fp16) significant bits, so a value rounded at another
  // point of the computation differs by ulps of 3.9e-3 (bf16) or 4.9e-4 (fp16) relative; 1e-2 is about
  // 2.5 bf16 ulps.
  double atol_half = 1e-2, rtol_half = 1e-2;
  // {"float32": {"atol", "rtol"}, "float64": ..., "float16": ..., "bfloat16": ...}: the request field.
  nlohmann::json to_json() const;
};

// G4 and E2E, work hidden outside the timed stream (verify/rules.cpp): the candidate's
// device-synchronized time may exceed its event time by at most as much as the baseline's does, plus
// this slack. The difference of the two gaps is noise (host wake-up after the synchronize) even for an
// honest candidate: the absolute part covers it for short kernels, the relative part for long ones.
// (G1 already rejects the host code that could pick another stream; this is the second line.)
inline constexpr double kHiddenSlackMs = 0.02;
inline constexpr double kHiddenSlackOfMedian = 0.1;  // of the baseline's median time

struct CascadeOptions {
  int seeds = 5;                   // G2: fresh random inputs per seed, plus the real recorded ones
  // G4 and E2E: the candidate's p80 must be at most the baseline's p20 / gamma: besides the
  // percentiles' margin, a required 3% so that a win within the timing noise cannot pass (docs/design.md).
  double gamma = 1.03;
  // G3 and E2E: the candidate's error against float64 may exceed the baseline's by this factor. It
  // covers rounding-order noise between two equally accurate fp32 computations; a real accuracy
  // loss is far larger.
  double fp64_slack = 1.05;
  int reps = 50;                   // G4 and E2E repetitions
  Tolerances tol;                  // G2, G3, E2E
  std::chrono::seconds timeout{600};  // per request that runs candidate code
  // Loading the bundle and recording the baseline's launches (once per worker, before any candidate
  // code runs): not the candidate's time, so a short `timeout` cannot fail a candidate for it.
  std::chrono::seconds load_timeout{600};
  // E2E: judge correctness by the float64 rule alone (no "within tolerance of the baseline"
  // shortcut). Set when an accepted kernel passed G2 on rounding-level differences only.
  bool fp64_rule_only = false;
  // G3: the kernels the candidate's module keeps run under the baseline's settled configs (stitch.h).
  stitch::Pins pins;
  // Told each gate's outcome and each G2 run as it ends (`G2 run 3/7 seed 1 (symmetric): match (12.3 s)`): a
  // cascade in the interpreter takes minutes. Not a gate setting (not in the search's cache key).
  std::function<void(const std::string&)> progress;
  // G2 starts no run that would end after this time (each taken to last as long as the longest before it): the
  // cascade ends cut short (`cut_short`), neither accepted nor
  // rejected. The job's hard end of its budget (search/cost.h): a candidate can run far slower in the
  // interpreter than any estimate from the kernel it replaces.
  std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
};

struct GateRecord {
  std::string gate;    // "G1", "G2", "G3", "G4", "E2E"
  GateStatus status = GateStatus::failed;
  nlohmann::json evidence;
};

struct CascadeResult {
  bool accepted = false;
  bool performance_measured = false;  // G4 ran on a GPU (CPU mode never claims speed)
  std::string kernel, candidate_hash;
  std::vector<GateRecord> gates;  // as JSON: results/record.h
};

// G1 (static checks, then `compiles` in the worker) through G4, in order; the first failure stops.
// The end-to-end gate on the re-stitched model is separate (verify/end_to_end.h): it runs once on
// the final module, not once per candidate.
CascadeResult run_cascade(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph, const ir::Kernel& kernel,
                          const std::string& candidate_source, const CascadeOptions& o);

// Whether the cascade was cut short at `stop_at`: it says nothing of the candidate (never cached as a verdict).
bool cut_short(const CascadeResult& r);

// Whether the candidate passed G2 only on rounding-level differences from the original (a changed
// summation order): its correctness then rests on the float64 rule, at G3 and at the end-to-end gate.
bool passed_on_rounding(const CascadeResult& r);

// Hex XXH3-64 of a candidate's source: the key its records are stored under.
std::string source_hash(const std::string& source);

}  // namespace kopt::verify
