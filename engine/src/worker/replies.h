// The worker's replies as the engine reads them (docs/protocol.md): one struct per op whose reply
// the engine looks into, each parsed in one place (replies.cpp). A successful reply missing a field
// the engine reads, or holding it with another type, throws ReplyError naming the op and the field:
// the engine and the worker disagree on the protocol, which no candidate can cause.
// Every reply keeps `raw`, the reply as it came: the engine copies worker evidence (comparisons,
// timing summaries, failure records) verbatim into reports. A failed reply — the worker's
// {"ok": false, "error", ...} or the supervisor's {"ok": false, "failure", ...} — has `ok` false and
// nothing else parsed; verify::reply_evidence turns its `raw` into evidence.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::worker {

struct ReplyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What every reply has. Replies whose content the engine only stores or passes on (load_bundle,
// ceilings, forget_bundles) are this alone.
struct Reply {
  nlohmann::json raw;
  bool ok = false;
};
Reply parse_reply(nlohmann::json raw);

// A timing summary (measure/timing.py); `raw` is what reports carry.
struct Timing {
  nlohmann::json raw;
  double median_ms = 0, p20_ms = 0, p80_ms = 0;
  double synced_median_ms = 0;  // device-synchronized (synced.median_ms)
};
// `op` names the reply it came in, for the error.
Timing parse_timing(nlohmann::json raw, std::string_view op);

// run_kernel: the candidate against the original on one launch's arguments (G2).
struct RunKernelReply : Reply {
  bool match = false;
  bool rounding_only = false;          // every difference at rounding level (absent: false)
  std::optional<bool> deterministic;   // with `repeat` only
  nlohmann::json comparison;           // {"args": [per-argument comparison]}: evidence
};
RunKernelReply parse_run_kernel(nlohmann::json raw);

// run_module: the re-stitched model against the baseline, eager and (with fp64) float64.
// The comparisons are evidence, kept as the worker wrote them ({"ok", "outputs", "reason"?}).
struct RunModuleReply : Reply {
  nlohmann::json vs_baseline, vs_eager;                // vs_eager: {} when absent
  nlohmann::json candidate_vs_fp64, baseline_vs_fp64;  // with fp64 only (else null)
  nlohmann::json baseline_self;                        // the baseline against itself; null when absent
  bool within_tolerance() const { return vs_baseline.value("ok", false); }
};
RunModuleReply parse_run_module(nlohmann::json raw, bool fp64);

// time_kernel and time_module: the baseline against the candidate (the optimized modules), when
// measured; a CPU worker answers measured=false with its reason.
struct TimedReply : Reply {
  bool measured = false;
  std::optional<std::string> reason;
  Timing baseline, candidate;  // time_module's candidate is its "optimized"
};
TimedReply parse_time_kernel(nlohmann::json raw);
TimedReply parse_time_module(nlohmann::json raw);

// bench_times: eager, torch.compile and (when sent sources) the optimized modules, side by side.
struct BenchTimesReply : Reply {
  bool measured = false;
  nlohmann::json eager, compiled, optimized;  // measured only; optimized: null when not asked
};
BenchTimesReply parse_bench_times(nlohmann::json raw);

// compile_kernel: G1's `compiles`.
struct CompileKernelReply : Reply {
  bool compiled = false;
  std::optional<std::string> error;  // Triton's rejection
  std::string how;                   // how it was compiled, when it was
};
CompileKernelReply parse_compile_kernel(nlohmann::json raw);

// record_launches: every kernel launch of the baseline with its arguments and settled config.
struct RecordLaunchesReply : Reply {
  nlohmann::json launches = nlohmann::json::array();  // launch records (artifact/launch records)
};
RecordLaunchesReply parse_record_launches(nlohmann::json raw);

// run_baseline: the captured modules against the eager model.
struct RunBaselineReply : Reply {
  bool match = false;
  nlohmann::json seconds;  // {part: seconds}: where the time went; null when absent
};
RunBaselineReply parse_run_baseline(nlohmann::json raw);

// run_fp64: the baseline against the float64 model.
struct RunFp64Reply : Reply {
  nlohmann::json baseline_vs_fp64;  // null when deferred
  std::string deferred;             // why the reference was not made (asked with defer_host); empty when it was
};
RunFp64Reply parse_run_fp64(nlohmann::json raw);

// profile: the baseline module's per-kernel times (GPU); reports read the rest from `raw`.
struct KernelTime {
  std::string name;
  double ms_per_run = 0, calls_per_run = 0;
};
struct ProfileReply : Reply {
  std::vector<KernelTime> kernels;
};
ProfileReply parse_profile(nlohmann::json raw);

// screen: each candidate's median beside the original's.
struct ScreenedCandidate {
  bool ok = false;
  double median_ms = 0;  // ok only
  std::string error;     // not ok: why ("?" when not said)
};
struct ScreenReply : Reply {
  double baseline_median_ms = 0;
  std::vector<ScreenedCandidate> candidates;  // in the order sent
  double compile_s = 0, run_s = 0;            // seconds.compile, seconds.run (absent: 0)
  bool parallel_compile = false;
};
ScreenReply parse_screen(nlohmann::json raw);

}  // namespace kopt::worker
