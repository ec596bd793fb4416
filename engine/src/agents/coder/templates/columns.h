// Moving between a thread's [rows, W] tile and its W columns in registers, for writers whose
// threads own several consecutive outputs (the pool template's register windows, pattern:window's
// column tiles): a tile read as one vector load is split into the columns each output needs, and
// the columns computed per output are joined back into the tile a vector store writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kopt::agents::templates {

// Lines that split a [rows, width] tile `var` (width a power of two) into its columns
// `var`_0 .. `var`_{width-1} ([rows] each): reshaped to [rows, 2, ..., 2], each tl.split peels the
// lowest index bit, so the parts after b splits hold the elements whose low b bits spell their path.
std::vector<std::string> split_columns(const std::string& var, int64_t width, int64_t rows);

// Lines that join `columns` ([rows] each, a power of two of them), in order, into one
// [rows, columns.size()] value `out`: tl.join appends a size-2 last dimension, so pairs are joined
// from the highest index bit down.
std::vector<std::string> join_columns(std::vector<std::string> columns, int64_t rows, const std::string& out);

}  // namespace kopt::agents::templates
