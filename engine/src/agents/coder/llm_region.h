// The LLM coder's region unit: the facts of a region written for the region prompt
// (prompts/region.md) and the strict reading of a reply into a region candidate. The reply is one
// @triton.jit function named as asked; its pointer parameters are named after the region's input
// and output buffers (that is how the launch binds them), then `xnumel` (and `r0_numel` for a kernel
// that loops over rows) with their values assigned in the body, then XBLOCK (and R0_BLOCK) as
// constexprs. The engine writes its declaration under Inductor's heuristics (pointwise or
// reduction, size hints from the sizes, the signature from the buffers' types, shaped like a region
// kernel's) and its launch in place of the region's, so the host code is the region edit G1 allows.
#pragma once

#include <string>

#include "agents/agent.h"
#include "agents/coder/fusion/fusion.h"
#include "agents/llm/common.h"

namespace kopt::agents::llm_support {

// Regions of more launches than this are not sent (one reply would have to redo them all).
constexpr size_t kMaxRegionLaunches = 4;

// The fused kernel's name for the region.
std::string region_kernel_name(const RegionUnit& u);

// The prompt's variables: facts (host code, buffers, every kernel's source), name, inputs, outputs, internal.
std::map<std::string, std::string> region_vars(const RegionUnit& u);

// The region candidate a reply describes, or why it describes none.
Parsed<fusion::RegionCandidate> region_candidate(const RegionUnit& u, const std::string& reply);

}  // namespace kopt::agents::llm_support
