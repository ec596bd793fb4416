// GELU's `1 + erf(x)` and `1 + tanh(x)` (Inductor's exact and tanh-approximate GELU) in branch-free
// closed forms of the sum itself, for kernels bound by their per-element arithmetic (a bf16 GELU
// epilogue: libdevice's erf evaluates one of two polynomials per lane, and a warp whose inputs
// straddle |x| = 1 runs both):
//     1 + erf(x)  = erfc(-x)        = where(x >= 0, 2 - c, c), c = erfc(|x|)
//     1 + tanh(x) = 2 sigmoid(2x)   = 2 / (1 + exp(-2x))
// with erfc(|x|) by the Chebyshev fit of Numerical Recipes (`erfcc`, fractional error below 1.2e-7
// everywhere): written as the sum, not as 1 + (an erf near -1), the negative tail keeps its relative
// accuracy, which the kernel's own form loses to the cancellation. A kernel that stores only half
// precision (bf16 / fp16) gets Abramowitz-Stegun 7.1.28 instead, erfc(z) = P6(z)^-16 (absolute error
// below 3e-7, no exp; three bf16 ulps at 1 are 2e-2). Not bit-equal: G2 and G3 judge either by the
// tolerances. Declines for float64 kernels (both fits are float32-accuracy ones).
#pragma once

#include <optional>
#include <string>

#include "artifact/ir.h"

namespace kopt::agents::rewrites {

struct OnePlus {
  std::string source;
  int erf = 0, tanh = 0;  // sums rewritten
  bool half_fit = false;  // erf by the half-precision (rational) fit
};

// Only where an erf's (tanh's) value is used solely as `V + one` or `one + V`, with `one` a
// `tl.full(..., 1.0, ...)`: other uses would need the function itself, which these forms do not give
// to float32 relative accuracy near 0. `half_outputs` (stores_half_only below) picks the erf fit.
std::optional<OnePlus> one_plus(const std::string& source, const std::string& name, bool half_outputs,
                                std::string* why);

// Whether every pointer `k` stores through (verify::pointer_writes) is bf16 / fp16 in its signature:
// then an absolute error of 3e-7 in 1 + erf is far below what the output keeps.
bool stores_half_only(const ir::Kernel& k);

}  // namespace kopt::agents::rewrites
