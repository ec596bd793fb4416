// The roofline side of the profiler: the bytes a kernel must move and the FLOPs
// it must do, counted from its launches' real arguments, and the floor those
// imply on the measured ceilings (docs/design.md, "Measuring on the GPU"). The floor is a lower
// bound on the kernel's time: no candidate can beat it, and the search stops
// early once a candidate is close to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::profile {

// A kernel whose time is within this factor of its floor has nothing worth searching for: the planners
// skip it and the search stops tuning there. 5%: the floor counts compulsory traffic at the measured
// copy bandwidth, so no kernel reaches it exactly, and a smaller gain is barely above the 3% that
// G4's timing rule requires anyway (gamma, verify/cascade.h).
inline constexpr double kNearFloor = 1.05;

struct Cost {
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t flops = 0;       // matrix-multiply FLOPs (tl.dot); elementwise arithmetic is not counted
  std::string flops_rate;   // which measured matmul rate bounds them: "bf16", "fp16", "tf32", "fp32"
  bool flops_known = true;  // false for a kernel with tl.dot whose GEMM shape was not found
  uint64_t bytes() const { return bytes_read + bytes_written; }
};

// Bytes touched by one tensor argument as the worker describes it ({shape, stride, dtype}):
// the smaller of its element count and its address span, times the element size.
uint64_t tensor_bytes(const nlohmann::json& arg);

// The cost of one launch of `k` with the worker's launch record `launch` ({"args": [...]}):
// every input read once, every pure output written once, every in-place argument read and
// written once — the compulsory traffic, which is what the floor must count.
Cost launch_cost(const ir::Kernel& k, const nlohmann::json& launch);

// max(bytes / copy bandwidth, FLOPs / rate) in ms, from the worker's measured ceilings
// ({"copy_bytes_per_s", "matmul_flops_per_s": {...}}); nullopt when not computable.
std::optional<double> floor_ms(const Cost& c, const nlohmann::json& ceilings);

// "compute" when the FLOPs' time on the measured rate exceeds the bytes' on the copy bandwidth,
// else "memory"; "unknown" when the FLOPs are not known (without ceilings: "compute" if any FLOPs).
std::string bottleneck(const Cost& c, const std::optional<nlohmann::json>& ceilings);

// The FLOPs of the matrix products in a kernel with tl.dot, from its launch's tensor shapes: an
// output [..., M, N] and two inputs [..., M, K] (or [K, M]) and [..., K, N] (or [N, K]) give
// 2 * batch * M * N * K; `written[i]`: argument i is written (outputs), the others are the operands.
// nullopt when no such triple is among the arguments.
std::optional<uint64_t> gemm_flops(const nlohmann::json& args, const std::vector<bool>& written);

// Element size of a worker dtype name ("float32", "bfloat16", "int64", ...); 0 if unknown.
size_t dtype_size(const std::string& dtype);

// Triton's pointer type ("*fp32", "*bf16") as a worker dtype name; "" if unknown.
std::string pointee_dtype(const std::string& ptr);

}  // namespace kopt::profile
