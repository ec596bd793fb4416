// Semantics-preserving source rewrites of Inductor's own kernels: the "rewrite"
// strategy of the built-in coder, beside the config space and the templates.
// Each rewrite is a pure function of the kernel source (and, where a fact about
// the launches is needed, of the recorded launches) done on the parsed syntax
// tree by byte offsets: it returns the rewritten source, or nothing with the
// reason it declined. The @triton.jit entry and its parameters stay as they are; the
// heuristics decorator too, so a rewrite launches with the kernel's own configs — except
// the single pass (single_pass.h), which fixes its block and pins its configs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/agent.h"

namespace kopt::agents::rewrites {

// Drops Inductor's 64-bit index widening (`.to(tl.int64)` on an expression built
// from tl.program_id / tl.arange) when every launch's integer arguments and every
// tensor's span are below 2^30 (2^31 with a block's overshoot to spare), so that
// 32-bit index math cannot overflow. Declines when no launch is recorded.
std::optional<std::string> int32_indexing(const std::string& source, const std::string& name,
                                          const std::vector<nlohmann::json>& launches, std::string* why);

// Eviction-hint variants of a looped reduction whose first and last `for` loop
// load the same pointer: {description, source} pairs, only `eviction_policy`
// keywords of tl.load calls changed. "evict_last first pass, evict_first last
// pass" (skipped when equal to the source) and "eviction hints removed".
std::vector<std::pair<std::string, std::string>> eviction_hints(const std::string& source, const std::string& name,
                                                                std::string* why);

// The kernel's loading `tl.range` loops (Inductor's reduction loops) given a stage count,
// `num_stages=2` and `=3`: {description, source} pairs. Triton pipelines such a loop's loads only
// on the loop's own count; the launch's num_stages leaves it alone (H200, Triton 3.6: Inductor's
// argmin over dim 0 runs the same at launch stages 1-3 and 3.3x faster with the loop's own 3;
// benchmarks/column_reductions.py `inductor`).
std::vector<std::pair<std::string, std::string>> loop_stages(const std::string& source, const std::string& name,
                                                              std::string* why);

// Every rewrite of `k` (registered once, in rewrites.cpp's table) as candidates of origin
// "rewrite" — the single-pass ones (single_pass.h) first, each with its launch config pinned; the
// others keep the kernel's own configs — and the reasons of the rewrites that declined joined into `why`.
std::vector<Candidate> candidates(const KernelProfile& k, std::string* why);

}  // namespace kopt::agents::rewrites
