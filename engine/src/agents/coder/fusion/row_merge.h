// Row merge: a reduction kernel whose per-row results (a mean and a variance, a max and a sum of
// exps) only one pointwise kernel reads, over the same rows, merged with that kernel into one
// program per block of rows. Inductor splits a group norm so (statistics, then normalize with a
// per-channel scale): the input is read twice from memory and the statistics round-trip. Merged,
// each program computes its rows' statistics as the reduction did and then runs the pointwise
// kernel's statements on the same rows with the statistics in registers — straight after them in
// a persistent kernel (the row is still in registers), or in a second loop over the row in a
// looped one, whose first loop now keeps the row in L2 (evict_last) for the second to re-read.
//
// The consumer's element for row x, position r is the producer's own load index of an input the
// consumer reads at its x index (the "anchor"); the strategy evaluates both kernels' index
// expressions (every (x, r) for small sizes, a grid of edge and interior points otherwise) and
// declines unless the anchor covers the consumer's elements and every read of a statistic lands on
// the row the producer stored it for. G2 is what proves the candidate, like any other.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/coder/fusion/pair.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The merged kernel for the producer and consumer of `p`, fusing every internal buffer the two
// alone pass between them (`p.internal`), or nothing with the reason.
std::optional<stitch::RegionEdit> row_merge(const Pair& p, std::string* why);

// A merged looped kernel's passes made one (rewrites/single_pass.h) where a row fits one program:
// the second pass reuses what the first loaded, so each row is read from memory once. One row per
// program at two warp counts (about 16 and 8 elements per thread), each with what it is; none for a
// persistent kernel or longer rows.
std::vector<std::pair<std::string, stitch::RegionEdit>> row_merge_variants(const stitch::RegionEdit& merged);

}  // namespace kopt::agents::fusion
