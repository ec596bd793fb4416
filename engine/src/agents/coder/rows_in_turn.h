// Rows in turn: a row kernel (every row of the tile in straight-line code: a persistent reduction,
// or a looped one after the single pass, single_pass.h) made to walk XBLOCK // XB tiles of XB rows
// one after another in a `tl.range` loop, with the statements that do not depend on the row — the
// loads of a weight, a bias, a position vector, the column index and mask — hoisted above the loop,
// so each program loads them once instead of once per tile, and (over two stages) the next tile's
// loads are in flight while the current one is reduced. The fused ALiBi softmax loads an int64
// position per element that no row reuses: with the positions computed instead, the H200 ran it in
// 0.58 ms against 0.78 (benchmarks/fused_softmax_rows.py `no_pos`); hoisting is the safe half of that.
//
// Nothing is recomputed or reordered within a row: each tile runs the kernel's own statements, so
// a row's result is bit-equal to the kernel's at the same XB. Declines on control flow, a name
// read before its assignment and assigned again (it would carry across tiles), and a hoisted load
// from a pointer the kernel stores to.
#pragma once

#include <optional>
#include <string>

namespace kopt::agents::rewrites {

struct RowsInTurn {
  std::string source;  // XB baked in as a constexpr; the config's XBLOCK is XB x the tiles per program
  int hoisted = 0;     // statements moved above the loop
  int hoisted_loads = 0;
};

// `xb`: rows per tile (the kernel's own XBLOCK for the rows it was verified at); `stages`: the
// tile loop's own stage count (1: none).
std::optional<RowsInTurn> rows_in_turn(const std::string& source, const std::string& name, int64_t xb, int stages,
                                       std::string* why);

}  // namespace kopt::agents::rewrites
