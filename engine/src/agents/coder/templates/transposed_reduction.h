// Inductor's reduction kernels re-oriented: its tiles are [XBLOCK outputs, R0_BLOCK reduced], so
// loads along the outputs' contiguous axis run along the tile's first dimension while the
// accumulators and the reduction run along the second. Transposing the tile to [R0_BLOCK rows,
// XBLOCK columns] keeps every statement of the kernel (broadcast axes swapped, reduction axis
// 1 -> 0, so the combine rules — NaN first, lowest index among equal extremes — are the kernel's
// own) while each program reads rows of adjacent outputs coalesced. Shared by the
// column_reduction template and the axis_reduction generator (agents/coder/patterns/), which
// differ in how programs are mapped to outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

struct TransposedReduction {
  bool looped = false;           // a row loop (kind "reduction") or one block (persistent_reduction)
  int64_t fixed_block = -1;      // a persistent reduction's R0_BLOCK (the kernel's constant)
  bool x_unmasked = false;       // `xmask = tl.full(...)`: xnumel a multiple of every XBLOCK, loads unmasked in x
  bool r_unmasked = false;       // the same for the row loop's r0_mask
  int64_t xnumel = 0, rnumel = 0;  // the launches' (all launches agree)
  // The entry's body, one logical line each (indentation kept), with the tile transposed:
  // `xindex = xoffset + tl.arange(0, XBLOCK)[None, :]`, `[R0_BLOCK, XBLOCK]` shapes, `..., 0)` reductions.
  std::vector<std::string> lines;
};

// The kernel's body transposed, or nothing with the reason in *why_not: not a reduction, a statement
// not provably elementwise or one that depends on the tile's orientation, control flow other than
// Inductor's row loops (one, or two: a statistics loop then one that writes the row, as for a softmax or a
// norm; each reoriented line for line), launches of different shapes. Inductor's 64-bit indexing
// (`tl.program_id(0).to(tl.int64)`, lanes `.to(tl.int64)`) is kept as written.
std::optional<TransposedReduction> transposed_reduction(const KernelProfile& k, std::string* why_not);

// `src` with its row loop given its own stage count: Triton pipelines a loop's loads only on that,
// never on the launch's num_stages (H200: the argmin of 16Kx4K fp32 at XBLOCK=32 R0_BLOCK=256
// 0.261 ms at any launch stages, 0.078 ms with the loop's own 3; benchmarks/column_reductions.py).
std::string with_loop_stages(const std::string& src, int stages);

// `s` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to);

}  // namespace kopt::agents::templates
