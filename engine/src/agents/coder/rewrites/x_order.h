// The "x order" rewrite: which output rows a program takes. Inductor numbers a kernel's x
// dimension (its outputs, or a reduction's rows) and gives program p the indices
// [p*XBLOCK, (p+1)*XBLOCK); the kernel splits each index into digits (`xindex % 175`,
// `(xindex // 175) % 3`, `xindex // 525`, ...) that address the tensors. When the digit that
// varies fastest is not the one adjacent in memory — a split group-norm reduction over a
// channels-last tensor reads one channel group per row, 512 bytes apart from the next — the
// programs running together read scattered sectors. The rewrite hands out the same indices in
// another digit order (one digit moved to the fastest place), so programs running together
// share cache lines. Every index is still computed exactly once, with the same code: the program
// index becomes `xlin`, `xindex` a bijection of it over [0, xnumel), and the x mask is taken on
// `xlin` (Inductor's `xmask = xindex < xnumel`), so out-of-range lanes stay masked.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kopt::agents::rewrites {

// {description, source} per digit that can be moved to the fastest place (none, with the reason
// in `why`, when the kernel's x indexing is not Inductor's static 1-D form or it has fewer than
// two digits). Digits come from the constant divisors and moduli applied to `xindex` directly.
std::vector<std::pair<std::string, std::string>> x_order(const std::string& source, const std::string& name,
                                                         std::string* why);

}  // namespace kopt::agents::rewrites
