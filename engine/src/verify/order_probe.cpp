#include "verify/order_probe.h"

#include <algorithm>

#include "verify/small_config.h"

namespace kopt::verify {

using nlohmann::json;

std::vector<json> order_probes(const ir::Kernel& k) {
  if (k.kind == "split_scan") {
    // The launcher's grid follows R0_BLOCK (one program per segment); the workspace holds a slot per
    // segment of the smallest size Inductor allows, so every larger power of two fits too.
    int64_t min_block = k.inductor_meta.value("min_split_scan_rblock", int64_t{256});
    int64_t hint = k.size_hints.is_object() && k.size_hints.contains("r0_") && k.size_hints["r0_"].is_number_integer()
                       ? k.size_hints["r0_"].get<int64_t>()
                       : min_block;
    std::vector<json> out;
    for (int64_t b : {min_block, 4 * min_block})
      if (b <= std::max(hint, min_block)) out.push_back({{"R0_BLOCK", b}, {"num_warps", 4}, {"num_stages", 1}});
    return out;
  }
  if (auto small = small_config(k, k.source)) return {*small};
  return {};
}

bool nonfinite_only(const json& comparison) {
  bool any = false;
  for (const json& a : comparison.value("args", json::array())) {
    if (a.value("ok", true)) continue;
    any = true;
    if (!a.value("finite_ok", false)) return false;
    if (a.value("nan_positions_match", true) && a.value("inf_positions_match", true)) return false;
  }
  return any;
}

}  // namespace kopt::verify
