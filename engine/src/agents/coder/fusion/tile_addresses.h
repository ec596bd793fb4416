// Addresses of a widened split kernel as a 64-bit base a step plus 32-bit offsets inside the tile.
//
// Inductor widens a kernel's indices to 64 bits once a tensor passes 2^31 elements (`xoffset =
// tl.program_id(0).to(tl.int64) * XBLOCK`, `r0_base = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)`), so every
// element of every load and store computes its address with 64-bit products (`r0_1 + 1212344*x0`). In a
// hand-written apply launch of a softmax over 1873 rows of 1.2M bf16 written across (H100,
// benchmarks/results/s38/split_hand_probe.py) that arithmetic cost 10.7 against 7.5 ms, and 7.3 against 5.7
// once its exps were cheap, for 9 GB a copy moves in 3.0 ms. In the split's own kernels, Inductor's statements
// kept, no difference was measured yet (8.20 against 8.23 ms: a true division an element and eviction hints
// are there too); exact integers either way, so nothing is risked where it does not help.
//
// An address `ptr + (c + a*x + b*r)`, affine in the row index's aliases (x: `x0 = xindex`) and the loop
// index's (r: `r0_1 = r0_index`), is written `ptr + (c + a*xoffset + b*r0_offset) + (a*xl + b*rl)`: the same
// integer, with the first sum a scalar in 64 bits and the second a tile of 32-bit offsets (xl, rl: the tile's
// own aranges), taken only where |a|*(XBLOCK-1) + |b|*(R0_BLOCK-1) stays below 2^31. Masks keep their full
// indices; where the loop index then has no other use than its mask and the rewritten addresses (and the row
// length fits 32 bits), its arange is narrowed too. Any other address (a division, a modulo, a name from
// elsewhere) stays as written.
#pragma once

#include <cstdint>
#include <string>

namespace kopt::agents::fusion {

struct TiledAddresses {
  std::string body;       // the body (the def line's statements, indented as given)
  int rewritten = 0;      // loads and stores whose address was split
  bool narrowed = false;  // the loop index's arange is 32-bit now
};

// `body` (a split kernel's statements, as split.cpp writes them) for a launch of tiles of `xblock` rows and
// `r0_block` elements; unchanged (rewritten 0) for a kernel that does not widen its row offset.
TiledAddresses tile_addresses(const std::string& body, int64_t xblock, int64_t r0_block);

}  // namespace kopt::agents::fusion
