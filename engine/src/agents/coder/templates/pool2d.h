#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// Sliding-window 2D max / average pooling (docs/design.md, "What expert kernel means here"): a program owns a
// block of output columns of one (n, c) plane and streams down a chunk of output
// rows; each input row's horizontal window result is computed once and the last
// K - S of them stay in registers, so every input element comes from memory once and
// each output costs K*S loads instead of Inductor's K*K. Parameters (kernel, stride,
// padding, dilation, ceil_mode, count_include_pad) are read from the graph fragment
// Inductor wrote above the kernel; handled: dilation 1, floor mode, stride <= kernel,
// contiguous NCHW, a kernel that computes only the pooled values.
std::vector<Candidate> pool2d(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::templates
