// The "transposed tile" rewrite of a 1-D pointwise kernel. Inductor writes some layout changes
// fused with arithmetic as a 1-D kernel over the output's order: a group norm applied to an NCHW
// tensor and stored channels-last reads `x1 + 16384*x0 + ...` where x0 (the channel) is the
// fastest digit of `xindex`, so the 32 lanes of a warp read 32 channels 64 KiB apart and the
// kernel runs at 2-2.5x its floor (the U-Net and VAE blocks on the H200). The rewrite hands each
// program a 2-D tile instead: TA values of the fastest digit (contiguous in the store) by TB of
// the next one (contiguous in the load), each digit variable an `arange` along its own axis so
// Triton sees both contiguities and moves the tile between the two layouts through shared memory,
// as in Inductor's own tiled (YBLOCK) kernels. Every element is computed once, by the same
// expression: the tiles partition [0, xnumel), since TA and TB divide the digits' extents.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::rewrites {

// One candidate per tile shape and warp count, each pinned to XBLOCK = TA*TB (the launch grid
// Inductor computes, xnumel / XBLOCK, is then the number of tiles). None, with the reason in
// `why`, when the kernel is not Inductor's static 1-D pointwise form, its x index is used other
// than through its digits, or no load or store is contiguous along the second digit.
std::vector<Candidate> transposed_tile(const KernelProfile& k, std::string* why);

}  // namespace kopt::agents::rewrites
