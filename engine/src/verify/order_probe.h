// G2's order probe: whether a kernel's own NaN/Inf positions depend on its blocking. A long product
// (a cumprod over special values) overflows at positions that depend on how its elements are
// grouped: `(huge * huge) * tiny` is inf where `huge * (huge * tiny)` is finite, and an inf times a
// later zero is NaN where a finite value times it is 0. Two blockings of the original's own code
// then disagree on NaN/Inf positions with every finite element equal, so a candidate that groups
// the product differently cannot match them either. The probe runs the original's own source under
// another launch config on the input set where a candidate differed only so; where it too differs
// only so, the positions are the kernel's rounding, not the candidate's error (docs/gates.md).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::verify {

// The configs the original's own source runs under for the probe, most useful first: the small
// config for pointwise and reduction kinds (blocks halved: loops take other chunks), the smallest
// and a 4x larger segment for a split scan (Inductor sizes its workspace for the smallest). Empty
// when the kind launches with a grid of its own that no config changes.
std::vector<nlohmann::json> order_probes(const ir::Kernel& k);

// Whether a run's comparison (the worker's `args`) differs only in NaN/Inf positions, the elements
// finite on both sides within tolerance or at rounding level (`finite_ok`), at least one argument
// differing.
bool nonfinite_only(const nlohmann::json& comparison);

}  // namespace kopt::verify
