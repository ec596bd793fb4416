#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// One-pass row softmax / log-softmax over the contiguous last dimension: each row is
// read from memory once into registers (max, exp, sum, normalize) and written once —
// the compulsory traffic — where Inductor's looped reduction reads a long row twice.
// Handles kernels with one input pointer and one pure output pointer, rows of up to
// 32768 elements, fp32/fp16/bf16 (computed in fp32).
std::vector<Candidate> row_softmax(const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::templates
