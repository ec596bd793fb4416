// Built-in profiler: counts each kernel's compulsory bytes from its launches,
// turns them into a floor on the measured copy bandwidth, and ranks kernels by
// the time optimizing them could win (time above floor); without times (CPU
// mode), by bytes moved.
#include <algorithm>

#include "agents/profiler/builtin.h"

namespace kopt::agents {

namespace {
// A measured time below this share of the counted floor means the byte count is not compulsory.
constexpr double kBelowFloor = 0.8;
}  // namespace

std::vector<KernelProfile> BuiltinProfiler::rank(std::vector<KernelProfile> kernels,
                                                 const std::optional<nlohmann::json>& ceilings) {
  for (KernelProfile& k : kernels) {
    k.cost = {};
    for (const nlohmann::json& l : k.launches) {
      profile::Cost c = profile::launch_cost(*k.kernel, l);
      k.cost.bytes_read += c.bytes_read, k.cost.bytes_written += c.bytes_written, k.cost.flops += c.flops;
      k.cost.flops_known = k.cost.flops_known && c.flops_known;
      if (!c.flops_rate.empty()) k.cost.flops_rate = c.flops_rate;
    }
    if (ceilings) k.floor_ms = profile::floor_ms(k.cost, *ceilings);
    k.bottleneck = profile::bottleneck(k.cost, ceilings);
    // "Every input read once" overstates a kernel that reads part of an input through indices (a loss
    // picking one logit per row): a floor far above its measured time bounds nothing, and would call
    // the kernel "at its floor". No floor then (measurement noise stays well inside the margin).
    if (k.floor_ms && k.time_ms && *k.time_ms < kBelowFloor * *k.floor_ms) {
      k.floor_ms.reset();
      k.bottleneck = "unknown";
    }
  }
  std::stable_sort(kernels.begin(), kernels.end(), [](const KernelProfile& a, const KernelProfile& b) {
    auto ra = a.recoverable_ms(), rb = b.recoverable_ms();
    if (ra && rb) return *ra > *rb;
    if (ra || rb) return static_cast<bool>(ra);
    return a.cost.bytes() > b.cost.bytes();
  });
  return kernels;
}

}  // namespace kopt::agents
