// The launch-config space of one Inductor kernel: block sizes, num_warps and
// num_stages, wider than Inductor's heuristics (which try a handful of configs)
// and coordinate-descent tuning. Only configs that are safe for the kernel's
// code are generated: a block size above Inductor's maximum for its dimension,
// or one that does not divide the numel of a dimension the code leaves
// unmasked, could read or write out of bounds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/coder/contiguity.h"
#include "artifact/ir.h"

namespace kopt::agents {

// What the config space depends on, read from the kernel and one launch record.
struct KernelShape {
  std::map<std::string, int64_t> numel;     // "X", "Y", "R0" -> xnumel, ynumel, r0_numel
  std::vector<std::string> blocks;         // the block constexprs the kernel takes: XBLOCK, YBLOCK, R0_BLOCK
  std::map<std::string, bool> masked;      // per dimension: does the code mask it (xindex < xnumel)?
  std::optional<int64_t> fixed_r0_block;   // persistent reductions fix R0_BLOCK in the body
  std::string kind;
  std::string reduction_hint;              // INNER, OUTER, ... when given
  // User kernels (kernel files, docs/inputs.md): the config they were captured with. Their grid
  // was computed by the launcher for its block sizes, so only num_warps / num_stages may change.
  nlohmann::json base_config;
  // Split scans: the host sizes the workspace for blocks of at least this many elements
  // (inductor_meta min_split_scan_rblock), one lookback slot per block.
  int64_t min_r0_block = 1;
  // Whether the launch's num_stages can change how the kernel runs: only where a loop feeds
  // `tl.dot` (Triton pipelines other loops on their own `tl.range(..., num_stages=)` alone; on the
  // H200, Triton 3.6, 1055 pairs of Inductor-kernel configs differing only in num_stages screened
  // within 0.5% of each other at the median, 6% at most). Otherwise the space keeps num_stages at 1.
  // User kernels: always (their space is num_warps and num_stages alone).
  bool launch_stages_matter = false;
  // The narrowest element the kernel loads or stores (bytes, from its launch's tensors): how many
  // of them fill a 32-byte DRAM sector.
  int elem_bytes = 4;
  // Kernels of more than one block (tiled pointwise, looped reductions): the axis each load and store walks memory along
  // (contiguity.h). The score wants every such axis's block a sector long: a transpose read along y
  // and written along z with a z block of 1 or 2 moves 2 bytes of every 32-byte sector it stores.
  std::vector<ContiguousRun> contiguous;
  // A looped reduction or scan none of whose loads and stores walks r (contiguity.h): its space takes R0
  // blocks from 1 up, not 16.
  bool strided_reduction = false;
  // How many loops over r the kernel's body has (`for r0_offset in`): 1 for a plain reduction, 2 for a
  // softmax's statistics-then-outputs kernel, whose second loop re-reads rows (from L2 if they fit).
  int row_passes = 0;
};

// The smallest power of two >= n (block sizes are powers of two).
int64_t next_pow2(int64_t n);

// ceil(a / b) for positive b: how many blocks of b cover a.
inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Reads the shape facts; nullopt when the kernel's config cannot be searched safely
// (GEMM templates: why in `why_not`).
std::optional<KernelShape> kernel_shape(const ir::Kernel& k, const nlohmann::json& launch, std::string* why_not);

// The configs to try, most promising first (by a static score: a few elements per
// thread, full warps, enough programs to fill the GPU).
std::vector<nlohmann::json> config_space(const KernelShape& s, int sm_count = 132);

// Configs one step away from `c` in one coordinate (a block size, num_warps or — where the
// launch's stages matter — num_stages doubled or halved), each still in the safe space.
std::vector<nlohmann::json> config_neighbours(const KernelShape& s, const nlohmann::json& c);

// Whether a config is in the safe space of `s`.
bool config_is_safe(const KernelShape& s, const nlohmann::json& c);

}  // namespace kopt::agents
