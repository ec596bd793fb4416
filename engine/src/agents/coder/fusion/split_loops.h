// What the two forms of the segment split (split.h: two launches; coop_split.h: one cooperative launch)
// read from a looped reduction kernel: its two loops over the row, the accumulators the first carries and
// their final reductions; and the tiles each form launches for the way the loops walk memory.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/templates/body.h"
#include "artifact/ir.h"

namespace kopt::agents::fusion {

using Line = templates::LogicalLine;

struct Accumulator {
  std::string name, neutral;  // the value of a lane that holds nothing yet
  size_t line = 0;            // its initialization, in the prologue
  size_t component = 0;       // its partials' place in the scratch
};

// A final statement: reduces accumulators over dim 1 into one value each (positionally).
struct Final {
  size_t line = 0;                   // in mid
  std::vector<std::string> outputs;  // the values, [XBLOCK] or (two_d) [XBLOCK, 1]
  std::vector<std::string> accs;
  bool two_d = false;
};

// The kernel's body in parts: the prologue, the statistics loop, what lies between the loops, the loop that
// writes the row (empty for a kernel with one loop and its results stored after it), what follows.
struct Loops {
  std::vector<Line> prologue, loop1, mid, loop2, tail;
  std::vector<Accumulator> accs;
  std::vector<Final> finals;
  int64_t rows = 0, cols = 0;
  size_t xoffset = 0;  // the prologue's `xoffset = ...` line
  bool wide = false;   // the program id is widened to int64
};

// Read for a split: Inductor's looped reduction with constant extents, float32 [XBLOCK, R0_BLOCK]
// accumulators each reduced once after the first loop, a second loop that carries nothing. Nothing, with
// the reason, otherwise.
std::optional<Loops> read_loops(const ir::Kernel& k, std::string* why);

// Whether a statement mentions the variable `name` (attributes and string literals are no names).
bool mentions(const std::string& text, const std::string& name);

// `tl.store(ptr, value, mask)` stored only where `guard` holds as well.
std::string guarded_store(const std::string& text, const std::string& guard);

// A statement of what lies between or after the loops, as a line of the apply part: a store (of a value
// the original stores once a row) by segment 0 alone, anything else as written.
std::string stored_once(const Line& l);

struct Plan {
  int64_t nseg, seg;
};

// A launch's tile: XBLOCK rows, R0_BLOCK elements of each a step.
struct Tile {
  int64_t xblock, r0_block, warps;
};

// The variants' tiles for a walk, and the programs per SM each variant aims at.
inline constexpr int64_t kSpread[3] = {4, 4, 8};
std::array<Tile, 3> tiles_for(Walk w);

const char* walk_words(Walk w);

}  // namespace kopt::agents::fusion
