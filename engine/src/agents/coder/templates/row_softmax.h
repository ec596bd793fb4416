#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::templates {

// One-pass row softmax / log-softmax over the contiguous last dimension: each row is
// read from memory once into registers (max, exp, sum, normalize) and written once —
// the compulsory traffic — where Inductor's looped reduction reads a long row twice.
// Handles kernels with one input pointer and one pure output pointer, fp32/fp16/bf16
// (computed in fp32); rows over 32768 elements get only the two-pass schedule.
std::vector<Candidate> row_softmax(const KernelProfile& k, std::string* why_not);

// The same schedule for a kernel that stores only each row's max and sum of exp (Inductor's
// prepare_softmax_online, ahead of cross-entropy's gather or of a long row's normalize).
std::vector<Candidate> row_softmax_stats(const KernelProfile& k, std::string* why_not);

// Rows longer than this do not fit in registers (64 fp32 values per thread at 16 warps): only the
// two-pass schedule takes them.
inline constexpr int64_t kMaxSoftmaxRow = 32768;

// Launch configs of the one-pass row schedule: rows per program so a program holds 1K-16K elements
// (a 32K row alone), warps so each thread holds 2-64 of them.
std::vector<nlohmann::json> row_softmax_configs(int64_t rows, int64_t rb, bool has_r0_block);
// Chunk sizes (CB) and launch configs of the two-pass schedule (a row read in chunks twice, the
// second time from L2): rows of 8K+ elements, two or more chunks per row, one row per program.
std::vector<std::pair<int64_t, std::vector<nlohmann::json>>> two_pass_configs(int64_t rb, bool has_r0_block);
// Launch configs of the rows-in-turn variant (XBLOCK rows per program, one after another): empty
// for rows under 8K elements or too few rows to keep two waves of programs.
std::vector<nlohmann::json> rows_in_turn_configs(int64_t rows, int64_t rb, bool has_r0_block);

}  // namespace kopt::agents::templates
