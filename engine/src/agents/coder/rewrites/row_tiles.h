// The "row tiles" rewrite of a 1-D pointwise kernel that reads values per row. Inductor's normalize
// and affine kernels (a batch norm in eval mode, a layer norm's last step, a per-channel scale and
// shift) index their per-channel or per-row vectors by a digit of the x index, `x1 = (xindex // 10064)
// % 143`: every element computes its digit by two integer divisions, loads the channel's mean, variance,
// weight and bias, and recomputes sqrt(var + eps) and its reciprocal — some 60-80 instructions per
// element, which on a half-precision tensor bounds the kernel by its arithmetic instead of its bytes.
// The rewrite hands each program tiles of one row of B elements (B the smallest digit boundary above
// 1): the row is a scalar of the program, so are the digits above it, so Triton loads the per-row
// values and computes everything built on them once per tile. Programs walk the tiles (rows x
// ceil(B / XBLOCK)) by a loop strided by the grid, so the launch grid Inductor computes stays
// valid for any XBLOCK; lanes past a row's end are masked (`xmask = xinner < B`), and an unmasked
// kernel's loads and stores get that mask. Every element is computed once, by the same expressions.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::rewrites {

// One candidate per block size whose tiles waste at most an eighth of their lanes on row ends;
// none, with the reason in `why`, when the kernel is not Inductor's static 1-D pointwise form, its
// rows are too short or do not divide xnumel, a digit above the row does not align with it, or no
// load reads a value per row.
std::vector<Candidate> row_tiles(const KernelProfile& k, std::string* why);

}  // namespace kopt::agents::rewrites
