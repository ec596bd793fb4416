// The suite's table: per level (and all levels together), from the per-problem rows
// (docs/bench.md, "The table"). Rows are the JSON objects of results.jsonl.
//
// - problems N; optimized / fallback / error counts;
// - correct: rows whose final model passed the correctness rule, over N (an error row
//   has no result, so it is not correct);
// - geomean: speedup over torch.compile (GPU time per call) over every measured row,
//   a fallback counting 1.0 — "including fallbacks"; with its count of measured rows;
// - geomean_optimized: the same over optimized rows only, with n/N;
// - fast_p for p in kFastP: the fraction of all N rows that are correct and faster than
//   p times torch.compile (speedup > p);
// - wall_geomean: the same as geomean on wall time per call; host_bound: rows whose
//   torch.compile call spends most of its wall time outside its kernels;
// - headroom: over the measured rows whose torch.compile time sits at least kHeadroomAbove
//   times above the row's floor (floor_ms: the module with every Triton kernel at its
//   roofline floor), sum ln(compile / optimized) / sum ln(compile / floor) — the share of the
//   physically available speedup recovered, fallbacks counting 0; headroom_n such rows;
// - time: medians over the rows that carry per-stage seconds of the problem's total and of its
//   capture (captured ahead, or the job's load), search, stitch + end-to-end gate, and the bench's
//   own check and timing; time_n such rows;
// - max_peak_ratio: the largest `memory.ratio` (peak device memory over the problem / torch.compile's
//   own peak for one call) among the rows whose memory was measured; null when none was.
// Unmeasured (CPU mode) tables have null speedups and fast_p.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::bench {

inline constexpr double kFastP[] = {1.0, 1.03, 1.5, 2.0};
// A row is host-bound when torch.compile's wall time per call exceeds this many times
// the sum of its kernels' time: more than half of what the user waits for is host work.
inline constexpr double kHostBound = 2.0;
// Rows nearer their floor than this have no headroom worth counting (a 5% gap is noise-sized).
inline constexpr double kHeadroomAbove = 1.2;

std::optional<double> geomean(const std::vector<double>& xs);
// "1.0", "1.03", "1.5", "2.0": the key of fast_p and its column name.
std::string p_label(double p);

// One object per level present in `rows` (ascending), then "all" when rows span several levels.
nlohmann::json summarize(const std::vector<nlohmann::json>& rows);

}  // namespace kopt::bench
