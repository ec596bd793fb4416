// A big-window pool as Inductor writes it when the window has many elements: a persistent
// reduction whose r index walks the window (r0_numel = 25 for a 5x5 window), each r's load masked
// by the bounds of its coordinates, combined by max2 / min2 / tl.sum. Written out per r value it is
// exactly the pointwise form Inductor uses for small windows (one load per window element, combined
// elementwise), which match_window already reads: this turns the one into the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::agents::patterns {

struct Unrolled {
  std::vector<std::string> lines;  // the pointwise body, one statement per line, no indentation
  std::string source;              // the same body as a kernel (`@triton.jit def ...`), for the parser
  int64_t r = 0;                   // r0_numel: the window's element count
};

// The persistent reduction `k` written as its pointwise equivalent, or nullopt with the reason in
// *why (not one reduction of loads over a constant r extent of at most kMaxUnrolled).
std::optional<Unrolled> unroll_reduction(const ir::Kernel& k, std::string* why);

inline constexpr int64_t kMaxUnrolled = 128;

}  // namespace kopt::agents::patterns
