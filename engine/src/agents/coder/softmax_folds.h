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

}  // namespace kopt::agents::rewrites
