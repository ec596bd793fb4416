#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// One-pass row norm (layer norm, RMS norm, vector norm, L2 normalize): each program
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

}  // namespace kopt::agents::templates
