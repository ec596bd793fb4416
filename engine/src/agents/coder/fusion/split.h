// The segment split: one launch of an Inductor looped reduction over few, long rows (softmax,
// log-softmax, norms: a first loop that accumulates each row's statistics, a second that writes the
// row from them) becomes two launches, so that every row is worked on by many programs at once
// instead of one:
//   - statistics: a program per (row, segment of the row) runs the first loop over its segment and
//     stores the reduced statistics of the segment (sum, max, online-softmax max and sum, Welford
//     mean / M2 / weight) into a scratch allocation, a few floats per row and segment;
//   - apply: a program per (row, segment) loads all segments' partials of its row, reduces them
//     with the original's own final statement (the same helper, over segments instead of lanes),
//     and runs the second loop over its segment; values the original stores once per row are
//     stored by segment 0.
// Read from the kernel's own text, not from an op name: the accumulators are the loop-carried
// [XBLOCK, R0_BLOCK] tiles, their final statements the reductions over dim 1 that Inductor writes
// for them. What the kernel computes is kept statement for statement; only the loops' ranges, the
// program's row and the accumulators' lanes change. A kernel with one loop and its results stored
// after it splits alike (its apply kernel: a program per row tile, the partials reduced, the results
// stored). Anything else (a third loop, stores in the first loop, an accumulation in the second, a
// dynamic shape, an in-place argument) is declined with the reason. Like every generator it only
// proposes: the region cascade decides (G1 holds the host edit, a scratch allocation and the two
// launches, to stitch/region.h's form).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "artifact/ir.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The cooperative form (one launch; see coop_split.cpp's coop_body): each program's statistics over its
// segment, its tile's partials through the scratch, then its segment again while L2 still holds it.
// Proposed beside the two-launch split, and where that one declines (many rows, short rows), for
// kernels whose second loop reads the row again and tensors of at least `coop_min_bytes` a pass.
struct SplitOptions {
  int64_t coop_min_bytes = int64_t{256} << 20;
  // What a program's segment holds (its widest input's bytes): the resident programs' segments stay
  // within L2 between the two loops.
  int64_t coop_segment_bytes = 64 << 10;
  // A tile's programs wait for each other: they must all fit on the GPU at once with room to spare (132
  // SMs hold 264 programs of 8 warps at the least). Tiles of 499 and 256 segments ran 78x and 24x slower
  // than the compiler's kernel (a softmax over 1873 rows of 1.2M bf16, H100, session 36); rows longer
  // than this many segments of the aim get longer segments (and come after the two-launch split).
  int64_t coop_max_segments = 64;
  // Proposed only for tiles of rows adjacent in memory (a reduction across it): there a log-softmax over dim 0
  // of 4096 x 269 x 669 fp32 ran 1.29x the compiler's kernel (H100, session 36). A row a program along memory
  // (a layer norm over 4099 rows of 262147 fp32: 0.35x) and rows read along and written across (a softmax
  // over 1873 rows of 1.2M bf16: 0.93x and 1.33x, where the two-launch split reached 2.14x) ran slower than
  // what else the search has; the form stays correct for them (the tests set this false).
  bool coop_across_only = true;
};

// Candidates (a one-line description and the edit) that split launch `launch` of `f`, or none with
// the reason in *why.
std::vector<std::pair<std::string, stitch::RegionEdit>> segment_split(const ir::Artifact& a, const ir::Function& f,
                                                                      size_t launch, std::string* why,
                                                                      const SplitOptions& options = {});

}  // namespace kopt::agents::fusion
