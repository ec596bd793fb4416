#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// Chunked row scan (cumsum, cumprod, reversed and exclusive variants along the last
// dimension): Inductor's persistent scan holds a whole row per program in registers and
// scans it in one tl.associative_scan. The template rewrites that kernel into a loop over
// chunks of the row with a carried prefix per row (docs/design.md, "What expert kernel means here": scans): each chunk is loaded,
// scanned, combined with the carry through the kernel's own combine function, stored, and
// its total folded into the carry, so a program holds a chunk, not a row, in registers,
// and several rows per program keep enough loads in flight. Every other statement of the
// kernel (loads with their index expressions, conversions, fused pointwise prologues and
// epilogues, stores) is reused verbatim per chunk: they are elementwise in the row index.
// Declines kernels with any reduction, a second scan, a multi-operand (tuple) scan, control
// flow, or a use of the block size other than as a shape.
std::vector<Candidate> scan_rows(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::templates
