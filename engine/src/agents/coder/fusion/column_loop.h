// The column loop: a pointwise kernel over R rows of N elements (Inductor's two digits, `x1 = xindex // N` and
// `x0 = (xindex % N)`) that reads an operand by the column alone — an RMS or layer norm's weight, a bias —
// re-reads that operand once a row. Where it is large (an RMS norm's weight of 7115197 floats, 28 MB, beside a
// 3.7 GB stream through a 50 MB L2), those reads come from DRAM: the normalize of a fresh draw's RMS norm over
// 129 rows ran 3.53 ms, 2.1 TB/s for its bytes where a copy of that layout moves 3.0 TB/s (H100, draw 33811 row
// 27), and row tiles without the per-element division did not change it. The column loop launches a program a
// block of columns (the launch's xnumel becomes N) that walks the rows in a loop: the column's operand stays in
// L1 from one row to the next, and the division and modulo per element go. The rest of the body runs as written
// with x1 the row (a constant of the iteration) and x0 the block's columns.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "artifact/ir.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

struct ColumnLoopOptions {
  // The column operand's bytes from which it is proposed: below, L2 keeps it beside the stream.
  int64_t min_column_bytes = int64_t{8} << 20;
};

// Candidates replacing launch `li` of `f`, {description, edit}, or none with the reason in *why.
std::vector<std::pair<std::string, stitch::RegionEdit>> column_loop(const ir::Artifact& a, const ir::Function& f,
                                                                    size_t li, std::string* why,
                                                                    const ColumnLoopOptions& o = {});

}  // namespace kopt::agents::fusion
