// The single pass's folds of Inductor's online softmax (single_pass.h): once the row loops are
// straight-line code, each row's online softmax combine runs once, on fresh accumulators, and its
// reduce can hand its exps to the output pass. Both rewrite the kernel's own arithmetic into the
// same bits with fewer exps; value numbering (single_pass.cpp) then does the reuse.
#pragma once

#include <string>

#include "artifact/ir.h"

namespace kopt::agents::rewrites {

struct FreshCombines {
  std::string source;
  int replaced = 0;
};

// `online_softmax_combine(-inf, 0, v)` on the fresh accumulators, folded to its closed form.
FreshCombines fresh_combines(const std::string& src, const py::Node* entry);

struct SharedReduces {
  std::string source;
  int inlined = 0;
};

// `M, S = online_softmax_reduce(A, B, 1, fast)` written out so that the output pass's exp(V - M) is
// the reduce's own; only where A is the row under an all-true mask (`row_fills_block`: the row
// length is the block).
SharedReduces share_reduce_exps(const std::string& src, const py::Node* entry, bool row_fills_block);

struct LeanSoftmax {
  std::string source;
  int folded = 0;  // shared reduces made lean
};

// A shared reduce (share_reduce_exps) whose sum only ever divides its own exps, `E / S`, written
// with the arithmetic that gives the same outputs: S = sum(E) (the folded combine's weights are 1
// wherever the row's max is finite, and a row whose max is not finite has only NaN exps), the max
// as tl.max (a NaN anywhere makes its exp, so S and every output, NaN whichever max is taken),
// exp as tl.math.exp2 (ex2.approx.ftz: results below 2^-126 flush to 0) and one reciprocal per
// row. Nothing (folded 0) where any use of S, M or E is another.
LeanSoftmax lean_softmax(const std::string& src, const py::Node* entry);

}  // namespace kopt::agents::rewrites
