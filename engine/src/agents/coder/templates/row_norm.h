#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// One-pass row norm (layer norm, RMS norm, vector norm, L2 normalize, instance norm): each program
// holds XBLOCK whole rows in registers, reduces them there (sums; Welford mean and M2
// as two passes over the registers) and writes every output once — the compulsory
// traffic, where Inductor's looped kernel reads a long row twice and a short-row
// kernel leaves the GPU half idle. What is computed is not assumed from the family:
// the kernel is read by read_row_kernel() and each stored value is emitted op for op
// (same loads, same constants such as eps, same outputs, per-row statistics included),
// so the instance keeps the original's semantics by construction. Rows of up to
// 32768 elements; longer rows, non-affine indexing or ops the reader does not know
// are declined with the reason.
std::vector<Candidate> row_norm(const KernelProfile& k, std::string* why_not);

// The families whose reduction kernels are row norms when their rows are contiguous:
// layer_norm, rms_norm, vector_norm; batch_norm for instance norm (a row per (n, c));
// group_norm for its statistics kernel (a row per (n, group)). A kernel of these families
// that is not a row kernel (training batch norm over N, H, W; the pointwise normalize of a
// group norm) is declined by the reader.
bool is_row_norm_family(const std::string& family);

}  // namespace kopt::agents::templates
