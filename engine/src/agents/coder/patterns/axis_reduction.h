// The axis-reduction generator ("pattern:axis_reduction"): a reduction over any axis but the
// innermost, recognized from the kernel's addresses whatever its op or reduction hint. Inductor
// numbers the outputs by `xindex` and splits it into digits; for a reduction over the middle dim of
// an [A, B, C] tensor it reads `x0 + C*r0_2 + B*C*x1` with `x0 = xindex % C`, `x1 = xindex // C`:
// the reduced index has stride C, the outputs' fastest digit x0 stride 1. Its tiles are [XBLOCK
// outputs, R0_BLOCK reduced], so a warp's lanes step along r (C elements apart) and XBLOCK
// consecutive outputs straddle rows of C whenever C is not a multiple of XBLOCK.
//
// The generator keeps every statement of the kernel, transposed as in the column_reduction template
// (templates/transposed_reduction.h: [R0_BLOCK, XTILE] tiles, the reduction along axis 0, so NaN and
// tie rules are the kernel's own), and changes only which outputs a program takes: a 2-D tile of OB
// outer rows by IB adjacent inner positions (x1 in [o*OB, o*OB+OB), x0 in [i*IB, i*IB+IB)), so each
// program's loads run along the contiguous inner axis from a row's start and loop over r. `xindex`
// becomes `outer*C + inner`, the x mask `inner < C` beside the kernel's own `xindex < xnumel`, and
// the fastest and outer digits are the tile's coordinates. XBLOCK is pinned so that Inductor's grid,
// cdiv(xnumel, XBLOCK), covers the tiles; programs past them are masked out (or, when Inductor wrote
// the kernel unmasked, redo a tile and store the same values).
//
// Recognized: kind reduction or persistent_reduction; every load that depends on both the reduced
// index and the outputs is affine in them, has no stride-1 reduced digit and a stride-1 x digit, the
// same one in every such load, and that digit is `xindex % C` or `xindex` itself (C = xnumel, one
// outer row). Loads of broadcast operands (per output, per reduced index) are kept as written.
// Declined with the reason otherwise; reductions along the contiguous axis ("innermost") are left to
// the row templates and the config search, where Inductor's layout is already coalesced.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::patterns {

std::vector<Candidate> axis_reduction(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::patterns
