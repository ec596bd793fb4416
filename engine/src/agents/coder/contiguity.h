// Which block of a tiled kernel each load and store walks memory along. A kernel that reads along
// one axis and writes along another (a transpose: softmax over dim 0 of a transposed input, stored
// contiguous) moves whole 32-byte sectors only when the tile is at least a sector long on both axes;
// a tile one element wide on either wastes most of every sector it touches. The config space ranks
// tiles by it (config_space.cpp); nothing here changes what a config computes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::agents {

// One access's contiguous axis: the block constexpr ("XBLOCK", "YBLOCK", "ZBLOCK", "R0_BLOCK") whose
// index has stride 1 in the access's address, and how many consecutive elements that index runs
// through before wrapping (`x0 = xindex % 7`: 7; 0 when it does not wrap).
struct ContiguousRun {
  std::string block;
  int64_t radix = 0;
  bool operator==(const ContiguousRun&) const = default;
};

// One entry per tl.load / tl.store whose address is `pointer + affine(index digits)` with some
// digit of stride 1; accesses that are not (a gather, a broadcast scalar) add nothing.
std::vector<ContiguousRun> contiguous_runs(const ir::Kernel& k);

}  // namespace kopt::agents
