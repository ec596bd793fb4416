// G1 for a region candidate: a whole module text in which new launches replace launches of a region
// (stitch/region.h): one fused kernel in place of several, or a split — a few kernels in place of one,
// handing partial results through scratch allocations. The candidate's host code must be exactly the
// original's with the allowed edits — the region's launches replaced by one launch of each kernel
// the candidate adds, the allocations and `del`s of the region's internal buffers removed,
// allocations of what the new launches pass moved up to them, scratch allocations of literal size
// (at most kMaxScratchBytes) passed by the new launches alone — and nothing else: the check rebuilds
// the module from those edits and compares it with the candidate byte for byte. The new launches
// may pass only the region's own buffers and their scratch, together must write every region output
// the removed launches wrote, and no input; each new kernel's source passes G1's static checks.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "artifact/ir.h"
#include "stitch/region.h"
#include "verify/static/g1.h"

namespace kopt::verify {

// What the engine's own analysis (profile/regions.h) says of the region: never taken from the
// candidate.
struct RegionFacts {
  std::vector<size_t> launches;  // indices into the entry function's launches, in call order
  std::vector<std::string> inputs, outputs, internal;
};

// A split's partial results are a few values per row and segment: more than this is no scratch.
inline constexpr int64_t kMaxScratchBytes = int64_t{256} << 20;
// A region candidate adds its fused kernel, and at most this many kernels in all.
inline constexpr size_t kMaxAddedKernels = 3;

struct RegionG1 {
  G1Result g1;
  std::optional<stitch::RegionEdit> edit;  // the candidate as an edit of the original (when it is one)
};

// Never throws for a bad candidate: each problem is a failed finding (`parses`, `host_code_edit`,
// `fused_launch`, then the fused kernel's static checks).
RegionG1 check_region(const ir::Artifact& original, const RegionFacts& facts, const std::string& candidate_module);

// The source text a span of `a`'s module covers (a statement, a launch).
std::string span_text(const ir::Artifact& a, const ir::Span& s);

// The storage a launch argument names: through inline `reinterpret_tensor(buf, ...)`, named views
// and aliases of `f` down to its base name.
std::string storage_of(const ir::Function& f, std::string text);

// The storages launch `l` of kernel `k` writes (the pointer parameters its kernel stores through)
// and reads (every other pointer parameter but the pure outputs), added to `writes` and `reads`.
void accesses(const ir::Kernel& k, const ir::Launch& l, const ir::Function& f, std::set<std::string>& writes,
              std::set<std::string>& reads);

}  // namespace kopt::verify
