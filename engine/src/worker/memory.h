// Device memory as the workers report it (docs/protocol.md: the `memory` op, run_baseline's
// `memory`, forget_bundles' `in_use_bytes`). A worker that does not answer these fields — an older
// worker, a failed request — makes the figure "not measured"; it never fails a job.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/supervisor.h"

namespace kopt::worker {

// A byte count at `key`: a non-negative integral number, else nullopt.
std::optional<int64_t> bytes_of(const nlohmann::json& j, std::string_view key);

// The workers' memory at one moment. Each worker has a GPU of its own, so the figures are the
// largest any worker reported; `measured` only when every worker answered `measured: true` (a CPU
// worker's figures are its own accounting, kept but not measured).
struct MemoryReading {
  bool measured = false;
  std::optional<int64_t> in_use_bytes, peak_bytes;
  // {"op", "peak_bytes"}: the request during which the largest peak was reached (null: not known).
  nlohmann::json peak_request;
};
MemoryReading combine_memory(const std::vector<nlohmann::json>& replies);

// Sends `memory` to every worker of `sup`; with `reset_peak` each resets its peak after answering.
MemoryReading read_memory(Supervisor& sup, bool reset_peak,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));

// run_baseline's `memory.compiled_peak_bytes`: torch.compile's own peak for one call of the model.
std::optional<int64_t> compiled_peak_of(const nlohmann::json& baseline_reply);

// The figure reports and bench rows carry: {"measured", "peak_bytes", "compiled_peak_bytes",
// "ratio", "peak_request"} (ratio = peak / compiled peak, null unless both are known).
nlohmann::json memory_summary(const MemoryReading& r, std::optional<int64_t> compiled_peak);

}  // namespace kopt::worker
