// The roofline side of the profiler: the bytes a kernel must move and the FLOPs
// it must do, counted from its launches' real arguments, and the floor those
// imply on the measured ceilings (DESIGN "Measuring"). The floor is a lower
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

struct Cost {
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t flops = 0;
  bool flops_known = true;  // false for kernels whose FLOPs we do not count (templates)
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

// Element size of a worker dtype name ("float32", "bfloat16", "int64", ...); 0 if unknown.
size_t dtype_size(const std::string& dtype);

}  // namespace kopt::profile
