// The "softplus" rewrite. `log1p(exp(a))` — softplus, and the `log1p(exp(-|x|))` of every binary cross
// entropy with logits — is two libdevice calls of a few dozen instructions each per element; a loss over
// half a billion bf16 elements ran at 1.8 TB/s (H100, draw 33811 row 30) where its bytes allow 2.6. Written
// `log2(1 + exp2(a * log2(e))) * ln(2)` it is two MUFU approximations (ex2.approx, lg2.approx.ftz): relative
// error a few float32 ulps where exp(a) is not small; where it is (a below about -17), 1 + exp(a) rounds to 1
// and the result is 0 against log1p's exp(a), an absolute error below 2^-24 that the gates' tolerances judge
// like any candidate's. Inf, -inf and NaN give what libdevice gives. Declined for float64 kernels.
#pragma once

#include <optional>
#include <string>

namespace kopt::agents::rewrites {

struct Softplus {
  std::string source;
  int rewritten = 0;  // log1p(exp(..)) pairs
};

// Each `T = libdevice.exp(A)` whose value only a following `U = libdevice.log1p(T)` reads.
std::optional<Softplus> softplus(const std::string& source, std::string* why);

}  // namespace kopt::agents::rewrites
