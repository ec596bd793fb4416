// G2's order probe: whether a kernel's own NaN/Inf positions depend on its blocking. A long product
// (a cumprod over special values) overflows at positions that depend on how its elements are
// grouped: `(huge * huge) * tiny` is inf where `huge * (huge * tiny)` is finite, and an inf times a
// later zero is NaN where a finite value times it is 0. Two blockings of the original's own code
// then disagree on NaN/Inf positions with every finite element equal, so a candidate that groups
// the product differently cannot match them either. The probe runs the original's own source under
// another launch config on the input set where a candidate differed only so; where it too differs
// only so, the positions are the kernel's rounding, not the candidate's error (docs/gates.md).
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::verify {

// The configs the original's own source runs under for the probe, most useful first: the small
// config for pointwise and reduction kinds (blocks halved: loops take other chunks), the smallest
// and a 4x larger segment for a split scan (Inductor sizes its workspace for the smallest), and
// where `candidate` (its source) pins a segment of B, segments of B/2 and 2B. Empty when the kind
// launches with a grid of its own that no config changes.
std::vector<nlohmann::json> order_probes(const ir::Kernel& k, const std::string& candidate = "");

// Whether some argument of a run's comparison (the worker's `args`) differs in NaN or Inf positions: such a
// run is probed only when its outputs were filled with garbage (an element left unwritten would show as a
// NaN position after a NaN fill, and as a finite difference after a garbage fill).
bool positions_differ(const nlohmann::json& comparison);

// Whether a run that did not match (its comparison, its poison fill, whether its repeat agreed) may be probed:
// deterministic, and differing in NaN/Inf positions only after a garbage fill (positions_differ).
bool probe_worthy(const nlohmann::json& comparison, std::string_view fill, bool deterministic);

// Whether a candidate's differences from the original on a run (`candidate`, the worker's comparison) are
// no more than the original's own under a probe config on the same inputs (`probe`): every floating
// argument the candidate gets wrong the probe gets wrong too — NaN/Inf positions where the candidate's
// differ; where the candidate's finite elements are beyond tolerance, finite differences at least
// 1/kOrderSlack as large as the candidate's. Integer and bool arguments never qualify (an index is right
// or wrong). A long fp32 product or sum regrouped differs from the original on every seed by far more than
// rounding of one element, and so does the original regrouped: G2 cannot ask a candidate to agree with the
// original better than the original agrees with itself; G3's float64 rule then judges its accuracy.
inline constexpr double kOrderSlack = 2.0;
bool within_order_sensitivity(const nlohmann::json& candidate, const nlohmann::json& probe);

}  // namespace kopt::verify
