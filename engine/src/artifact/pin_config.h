// A launch config pinned into a kernel's source: the heuristics decorator
// (`@triton_heuristics.pointwise(...)` etc.) becomes
// `@triton_heuristics.fixed_config(config={...}, filename=__file__,
// triton_meta=..., inductor_meta=...)`, keeping triton_meta and inductor_meta
// byte for byte. Inductor's runtime then launches that one config with the grid
// it computes from inductor_meta, so the launch site stays unchanged and the
// candidate is an ordinary kernel source for every gate and for stitching.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::ir {

// `config`: {"XBLOCK": 8, "R0_BLOCK": 1024, "num_warps": 8, "num_stages": 1}. Throws
// std::invalid_argument when the source has no heuristics decorator with both metas.
std::string pin_config(const std::string& kernel_source, const std::string& kernel_name,
                       const nlohmann::json& config);

// `k`'s own source pinned to `config`, the config Inductor's autotuner settled on for it in the
// baseline (launch record `config`), for the kinds whose launch fixed_config reproduces
// (pointwise and reductions); nullopt for other kinds or a source without both metas.
std::optional<std::string> pin_baseline_config(const Kernel& k, const std::string& source,
                                               const nlohmann::json& config);

// The config a parsed kernel source pins (`@triton_heuristics.fixed_config(config={...})`); nullopt
// when it is not pinned.
std::optional<nlohmann::json> pinned_config(const KernelSource& ks);

// "XBLOCK=8 R0_BLOCK=1024 num_warps=8 num_stages=1": blocks first, in a fixed order.
std::string describe_config(const nlohmann::json& config);

}  // namespace kopt::ir
