// The segment split of a looped scan: Inductor's scan over a long axis with a carry (cumsum,
// cumprod, any associative_scan: each program walks its columns' whole axis in blocks, the running
// value carried from block to block) keeps as many programs busy as it has column tiles. Over an
// outer axis of a transposed tensor (3433 steps of 108545 columns, tiles of 32 x 32 columns for
// coalesced loads and stores) that is 120 programs walking 3433 steps each, a quarter of the
// bandwidth. The split gives every tile several programs, each a segment of the axis:
//   - statistics: a program per (tile, segment) runs the loop over its segment without its stores
//     and stores the carry it ends with (the segment's total) into a scratch allocation;
//   - apply: a program per (tile, segment) folds the totals of the segments before its own into
//     its carry, with the kernel's own carry statements (the block total replaced by a segment's),
//     then runs the loop over its segment as written, stores included.
// The input is read twice and the output written once (1.5x the one-pass bytes), for many times the
// parallelism. Read from the kernel's text, not from an op name: the carries are the float32
// [..., 1] values the prologue initializes and the loop reassigns as `tl.where(roffset > 0, x,
// total)`, each total a `select_one` of the block's scan. 2-D (rows, Grid1D) and 3-D (y x columns,
// Grid2D) forms; anything else is declined with the reason. Like the reduction split
// (fusion/split.h) it only proposes: the region cascade decides.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "artifact/ir.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// Candidates (a one-line description and the edit) that split launch `launch` of `f`, a looped scan,
// or none with the reason in *why.
std::vector<std::pair<std::string, stitch::RegionEdit>> scan_segment_split(const ir::Artifact& a,
                                                                           const ir::Function& f, size_t launch,
                                                                           std::string* why);

}  // namespace kopt::agents::fusion
