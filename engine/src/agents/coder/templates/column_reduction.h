#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// Reductions over a strided dimension (sum/mean/amin/amax/argmin/argmax over dim 0 of a
// contiguous matrix, and the partial kernels of Inductor's split column reductions):
// Inductor tiles them [XBLOCK outputs, R0_BLOCK reduced], so the loads run along the
// tile's first dimension while its accumulators and reduction run along the second, and
// Triton converts layouts between the two. The template transposes the tile to
// [R0_BLOCK rows, XBLOCK columns] (docs/design.md, "What expert kernel means here": coalesce): each
// program reads rows of XBLOCK adjacent columns coalesced, accumulates down the rows in the
// same layout and reduces across them once at the end. Every statement of the kernel is
// kept; only its tile orientation changes (broadcast axes swapped, reduction axis 1 -> 0),
// so the combine rules (NaN first, lowest index among equal extremes) are the kernel's own.
// Applies to Inductor's OUTER reductions; declines statements it cannot prove elementwise
// or axis-1 reductions (the transposition: transposed_reduction.h, shared with the
// axis-reduction generator, agents/coder/patterns/axis_reduction.h).
std::vector<Candidate> column_reduction(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::templates
