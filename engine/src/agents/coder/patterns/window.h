// pattern:window, the windowed-load (stencil) generator: for a kernel match_window recognizes
// (window_match.h: pooling of any rank, window, stride, padding, dilation, ceil_mode and count
// mode, whatever aten op the comment names), a kernel that reads each input row with coalesced
// vector loads and reuses it across neighbouring outputs:
//   - along the innermost output digit, a lane owns V consecutive outputs and reads the input
//     positions they share as aligned [V * stride]-wide tiles (its neighbours' tiles, masked to the
//     columns the window reaches, hit L1), split into columns in registers;
//   - along the next window digit (the rows of a 2-D or 3-D pool), a program walks RH output rows
//     and carries the window rows the next output row shares instead of loading them again.
// Inductor's own statements compute everything else (the combine in its order, the average's
// divisor, an offsets output, a fused epilogue) on the window values, so results are bit-identical.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::patterns {

std::vector<Candidate> window(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::patterns
