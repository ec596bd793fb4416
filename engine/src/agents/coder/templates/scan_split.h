#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// Long rows (Inductor's split scan: a few rows, each scanned by many programs chained by a
// decoupled lookback through a host-zeroed workspace). Inductor's programs each hold one
// block of at most a few thousand elements, so a long row is a chain of thousands of
// lookback steps. The template gives each program a segment of 8K-64K elements walked in
// register-sized chunks, in two phases: the segment's total (each chunk reduced and folded
// in), the kernel's own lookback helper on that total (far fewer, larger steps, through the
// same workspace slots), then the scan of each chunk combined with the carried prefix. The
// second phase re-reads a segment the first just read (L2-resident), so HBM sees each
// element read once and written once. Loads, conversions, fused pointwise epilogues and
// stores are the kernel's own statements, reused per chunk.
std::vector<Candidate> scan_split(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::templates
