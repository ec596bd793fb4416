// The single-pass rewrite of Inductor's looped reductions. A looped ("red") kernel walks each row
// in R0_BLOCK chunks once per pass: softmax reads the row for its max and sum, then again to
// write exp(x - max) / sum; layer norm reads it for the Welford statistics, then again to
// normalize. Whatever the kernel fuses around the reduction (a mask from `arange < length`, a
// bias, a scale, a residual add), the passes re-load the same addresses. When every row fits one
// block, each pass runs exactly once over the whole row, so the loops become straight-line code
// and a later pass's load of what an earlier pass loaded (same pointer, mask and fill, nothing
// stored there in between) reuses the tensor already in registers: the row is read from memory
// once. What the later pass then recomputes from those same values (a mask, a bias, a scale) is
// reused too, so each element's chain is evaluated once. Computation is unchanged — one iteration
// of the same loop body, the same reduction helpers — so the result is the kernel's own, and every
// gate still checks it.
//
// Unlike the other rewrites (rewrites.h), this one fixes the block: the kernel gets its own
// constexpr R0_ALL (the row length rounded up to a power of two) in place of the R0_BLOCK
// parameter, which stays in the signature, so no launch config can make a block shorter than
// the row. Candidates pin a few launch configs (rows per program, warps) suited to the row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/agent.h"

namespace kopt::agents::rewrites {

// Longest row (elements) held in registers by one program: 8192 fp32 values over 16 warps are
// 16 per thread for each live tensor.
constexpr int64_t kMaxSinglePassRow = 8192;
// The largest tile (rows x row block) a program holds for a column reduction, whose loads need 32 or
// more rows a program to be coalesced: 64 values a thread over 32 warps.
constexpr int64_t kMaxColumnTile = 65536;

struct SinglePass {
  std::string source;  // the rewritten kernel, launch configs not yet pinned
  int64_t block = 0;   // R0_ALL: the row length rounded up to a power of two
  int reloads = 0;     // loads removed (a later pass re-loading what an earlier pass loaded)
  int recomputed = 0;  // expressions a later pass recomputed from the same values, now reused
  int combines = 0;    // online softmax combines on fresh accumulators folded to their closed form
  int shared_exps = 0; // online softmax reduces written out so the output pass reuses their exps
  std::string lean_source;  // the same with its shared reduces made lean (lean_softmax), or empty
};

// The rewrite, or nothing with the reason it declined. The row length comes from the kernel's
// own `r0_numel = N` (static shapes), else from the largest r0_numel among `launches`.
std::optional<SinglePass> single_pass(const std::string& source, const std::string& name,
                                      const std::vector<nlohmann::json>& launches, std::string* why);

// The rewrite as candidates of origin "rewrite", one per pinned launch config.
std::vector<Candidate> single_pass_candidates(const KernelProfile& k, std::string* why);

}  // namespace kopt::agents::rewrites
