// The suite's table: per level (and all levels together), from the per-problem rows
// (docs/bench.md, "The table"). Rows are the JSON objects of results.jsonl.
//
// - problems N; optimized / fallback / error counts;
// - correct: rows whose final model passed the correctness rule, over N (an error row
//   has no result, so it is not correct);
// - geomean: speedup over torch.compile (GPU time per call) over every measured row,
//   a fallback counting 1.0 — "including fallbacks"; with its count of measured rows;
// - geomean_optimized: the same over optimized rows only, with n/N;
// - fast_p for p in kFastP (KernelBench's p): the fraction of all N rows that are correct and
//   faster than p times torch.compile (speedup > p); fast_p_eager the same against eager
//   (eager_speedup: eager's GPU time over the optimized model's); geomean_eager its geomean;
// - wall_geomean: the same as geomean on wall time per call; host_bound: rows whose
//   torch.compile call spends most of its wall time outside its kernels;
// - headroom: over the measured rows whose torch.compile time sits at least kHeadroomAbove
//   times above the row's floor (floor_ms: the module with every Triton kernel at its
//   roofline floor), sum ln(compile / optimized) / sum ln(compile / floor) — the share of the
//   physically available speedup recovered, fallbacks counting 0; headroom_n such rows;
// - time: means over the rows that carry per-stage seconds, which add up: total (the row's seconds
//   plus a capture made ahead of its job) = capture (ahead, and the job's load) + start (workers,
//   ceilings) + measure (baseline, launch recording, profile) + search (plan, search, regions) +
//   verify (stitch, end-to-end gate, report writing) + bench (the bench's own check and timing) +
//   other (the rest: reading results, memory readings); time_n such rows;
// - max_peak_ratio: the largest `memory.ratio` (peak device memory over the problem / torch.compile's
//   own peak for one call) among the rows whose memory was measured; null when none was.
// Unmeasured (CPU mode) tables have null speedups and fast_p.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

inline constexpr double kFastP[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
// A row is host-bound when torch.compile's wall time per call exceeds this many times
// the sum of its kernels' time: more than half of what the user waits for is host work.
inline constexpr double kHostBound = 2.0;
// Rows nearer their floor than this have no headroom worth counting (a 5% gap is noise-sized).
inline constexpr double kHeadroomAbove = 1.2;

std::optional<double> geomean(const std::vector<double>& xs);
// eager's GPU time per call over the optimized model's (a fallback's optimized times are torch.compile's).
std::optional<double> eager_speedup(const nlohmann::json& row);
// The columns of `time`, in the order they add up to total.
inline constexpr const char* kTimeParts[] = {"capture", "start", "measure", "search", "verify", "bench", "other"};
// "0.0", "0.5", "0.8", "1.0", "1.5", "2.0": the key of fast_p and its column name.
std::string p_label(double p);

// One object per level present in `rows` (ascending), then "all" when rows span several levels.
nlohmann::json summarize(const std::vector<nlohmann::json>& rows);

}  // namespace kopt::bench
