// The "tail mask" rewrite of a 1-D pointwise kernel. Inductor masks every load and store with
// `xmask = xindex < xnumel`; where xnumel is not a multiple of 16 (any odd extent: 129 x 7115197
// elements), Triton cannot prove the mask constant over a vector of lanes, so every access is one
// element wide — four times the load and store instructions of a float32 kernel, eight of a bf16 one.
// The rewrite runs every block but the last with the mask all true (`tl.full([XBLOCK], True,
// tl.int1)`: Triton's analysis sees a constant, so the accesses are whole vectors) and the last block
// with Inductor's own mask: the body twice, under `if xoffset + XBLOCK <= xnumel:` and `else:`, each
// statement as written. Every element is computed once, by the same expressions.
#pragma once

#include <optional>
#include <string>

#include "artifact/ir.h"

namespace kopt::agents::rewrites {

// The rewritten source; nothing, with the reason in `why`, when the kernel is not Inductor's static 1-D
// pointwise form with a masked x index, or xnumel is a multiple of 16 (the accesses are vectors already).
std::optional<std::string> tail_mask(const ir::Kernel& k, std::string* why);

}  // namespace kopt::agents::rewrites
