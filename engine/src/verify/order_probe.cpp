#include "verify/order_probe.h"

#include <algorithm>
#include <optional>

#include "artifact/pin_config.h"
#include "verify/small_config.h"

namespace kopt::verify {

using nlohmann::json;

namespace {

// The R0_BLOCK a candidate's source pins (`@triton_heuristics.fixed_config(config={...})`), if any.
std::optional<int64_t> pinned_r0_block(const ir::Kernel& k, const std::string& candidate) {
  if (candidate.empty()) return std::nullopt;
  try {
    std::optional<json> cfg = ir::pinned_config(ir::parse_kernel_source(candidate, k.name, k.name));
    if (cfg && cfg->is_object() && cfg->contains("R0_BLOCK") && (*cfg)["R0_BLOCK"].is_number_integer())
      return (*cfg)["R0_BLOCK"].get<int64_t>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::vector<json> order_probes(const ir::Kernel& k, const std::string& candidate) {
  if (k.kind == "split_scan") {
    // The launcher's grid follows R0_BLOCK (one program per segment); the workspace holds a slot per
    // segment of the smallest size Inductor allows, so every larger power of two fits too.
    int64_t min_block = k.inductor_meta.value("min_split_scan_rblock", int64_t{256});
    int64_t hint = k.size_hints.is_object() && k.size_hints.contains("r0_") && k.size_hints["r0_"].is_number_integer()
                       ? k.size_hints["r0_"].get<int64_t>()
                       : min_block;
    std::vector<int64_t> blocks = {min_block, 4 * min_block};
    // A candidate segmenting the scan in blocks of B regroups it as the original does in blocks near
    // B (half, twice), not as in the smallest: a long fp32 product of a fresh draw (734M elements) in
    // blocks of 4096 differed from the original by 6.8e-4 where the original in blocks of 256 and
    // 1024 differed from itself by less than half that. Never B itself: that would be the candidate.
    if (auto b = pinned_r0_block(k, candidate))
      for (int64_t near : {*b / 2, *b * 2})
        if (near >= min_block && near != *b && std::find(blocks.begin(), blocks.end(), near) == blocks.end())
          blocks.push_back(near);
    std::vector<json> out;
    for (int64_t b : blocks)
      if (b <= std::max(hint, min_block)) out.push_back({{"R0_BLOCK", b}, {"num_warps", 4}, {"num_stages", 1}});
    return out;
  }
  if (auto small = small_config(k, k.source)) return {*small};
  return {};
}

bool positions_differ(const json& comparison) {
  for (const json& a : comparison.value("args", json::array()))
    if (!a.value("ok", true) && (!a.value("nan_positions_match", true) || !a.value("inf_positions_match", true)))
      return true;
  return false;
}

bool probe_worthy(const json& comparison, std::string_view fill, bool deterministic) {
  return deterministic && (fill == "garbage" || !positions_differ(comparison));
}

bool within_order_sensitivity(const json& candidate, const json& probe) {
  bool any = false;
  const json none = json::array();
  // References into the comparisons (a `value()` copy would not outlive its loop).
  const json& probe_args = probe.contains("args") ? probe["args"] : none;
  for (const json& a : candidate.value("args", none)) {
    if (a.value("ok", true)) continue;
    any = true;
    if (!a.contains("max_abs")) return false;  // an integer or bool argument, or one of another shape
    const json* p = nullptr;
    for (const json& b : probe_args)
      if (b.value("arg", -1) == a.value("arg", -2)) p = &b;
    if (!p || p->value("ok", true)) return false;  // the original keeps this argument under the probe
    bool nonfinite = !a.value("nan_positions_match", true) || !a.value("inf_positions_match", true);
    bool probe_nonfinite = !p->value("nan_positions_match", true) || !p->value("inf_positions_match", true);
    if (nonfinite && !probe_nonfinite) return false;
    if (!a.value("finite_ok", false) && p->value("max_abs", 0.0) * kOrderSlack < a.value("max_abs", 0.0)) return false;
  }
  return any;
}

}  // namespace kopt::verify
