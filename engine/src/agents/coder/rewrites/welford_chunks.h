// The "Welford chunks" rewrite. Inductor's looped statistics (layer, group, instance and batch norm,
// var/std) fold every element into per-lane Welford accumulators, `triton_helpers.welford_reduce`:
// a subtraction, a count increment and an IEEE division `delta / new_weight` per element, three
// selects after it, and a reduction of the lanes after the loop. The division alone is about ten
// instructions: on a layer norm over rows of 74925 fp16 values (H100) the statistics pass was
// compute-bound at 2.5x the kernel's floor. The rewrite gives each chunk of the loop its own exact
// statistics — its count, its mean (one division per row and chunk), the sum of squared deviations
// from that mean — and merges them into per-row accumulators with Welford's own combine
// (`triton_helpers.welford_combine`, Chan's formula). Per element: a select, an add, a subtraction
// and a multiply-add. At least as accurate as the per-element form (each chunk two-pass in
// registers); not bit-equal, so G2 and G3 judge it by the tolerances and the float64 rule. Inductor's
// split statistics (a row over several programs, each element a masked Welford triple folded in by
// `welford_combine`, the same division per element) are merged by chunk the same way.
#pragma once

#include <optional>
#include <string>

namespace kopt::agents::rewrites {

struct WelfordChunks {
  std::string source;
  int accumulators = 0;  // Welford accumulator triples rewritten
};
std::optional<WelfordChunks> welford_chunks(const std::string& source, const std::string& name, std::string* why);

}  // namespace kopt::agents::rewrites
