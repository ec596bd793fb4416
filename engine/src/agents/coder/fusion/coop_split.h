// The cooperative form of the segment split: one launch in place of a looped reduction whose second
// loop reads the row again. Each program (a tile of rows, a segment of them) runs the statistics loop over
// its segment, publishes its partials, waits for its tile's peers (or computes a missing peer's partials
// itself), reduces them and runs the second loop over its segment while L2 still holds what the first
// read (docs/optimize.md, "cooperative split").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agents/coder/fusion/split.h"
#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/fusion/split_loops.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// Candidates replacing launch `li` (read as `T` and `L`), or none with the reason in *why: tensors below
// `o.coop_min_bytes` a pass, kernels without a second loop, tiles that do not fit the rows. With `late`,
// the candidates whose segments the cap on segments made more than twice `o.coop_segment_bytes` go there
// instead (the search tries them after the two-launch split: they keep less in L2).
std::vector<std::pair<std::string, stitch::RegionEdit>> cooperative(
    const SplitLaunch& T, const Loops& L, size_t li, const SplitOptions& o, std::string* why,
    std::vector<std::pair<std::string, stitch::RegionEdit>>* late = nullptr);

}  // namespace kopt::agents::fusion
