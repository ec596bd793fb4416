// The small launch config G2 also runs a candidate under. Inductor launches a
// kernel with block sizes its autotuner picks, and CPU mode's default config makes
// each block the next power of two of its numel: on a small problem that is one
// program and one loop pass, where a candidate that works only in the first program
// (`if tl.program_id(0) > 0: return`) or covers only part of the loop's range passes.
// The small config gives at least two programs per grid axis and two passes of every
// loop where the numel allows, so the run catches those on both devices.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::verify {

// The config for `candidate` (a replacement for `k`, same signature): every free
// constexpr of the entry is a block whose size hint is known. Program-axis blocks
// (XBLOCK, YBLOCK, ZBLOCK: the launcher computes the grid from them) shrink, and a
// reduction block (R0_BLOCK, R1_BLOCK) shrinks only when the candidate loops over it
// (it is the step of a `range`/`tl.range` loop): without the loop the block covers
// the row, and a smaller one would drop the rest. nullopt when the kernel's kind
// launches with a grid of its own (templates, scans, user kernels), when a free
// constexpr is not such a block, or when no block would get smaller.
std::optional<nlohmann::json> small_config(const ir::Kernel& k, const std::string& candidate);

}  // namespace kopt::verify
