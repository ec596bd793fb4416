#include "profile/family.h"

#include <utility>
#include <vector>

namespace kopt::profile {

std::string family(const ir::Kernel& k) {
  auto has = [&](std::string_view needle) {
    for (const std::string& op : k.aten_ops)
      if (op.find(needle) != std::string::npos) return true;
    return false;
  };
  if (k.kind == "template") return "matmul";
  // Most specific first: a cross-entropy kernel also lists log_softmax, a norm also lists mean.
  static const std::vector<std::pair<const char*, const char*>> table = {
      {"nll_loss", "cross_entropy"},     {"_log_softmax", "log_softmax"}, {"_softmax", "softmax"},
      {"native_layer_norm", "layer_norm"}, {"native_group_norm", "group_norm"},
      {"_native_batch_norm", "batch_norm"}, {"batch_norm", "batch_norm"}, {"rms_norm", "rms_norm"},
      {"linalg_vector_norm", "vector_norm"}, {"max_pool", "pooling"},   {"avg_pool", "pooling"},
      {"adaptive_", "pooling"},          {"cumsum", "scan"},              {"cumprod", "scan"},
      {"logcumsumexp", "scan"},          {"argmax", "arg_reduction"},     {"argmin", "arg_reduction"},
      {"var_mean", "norm_statistics"}};
  for (const auto& [needle, fam] : table)
    if (has(needle)) return fam;
  if (has("rsqrt") && has("mean")) return "rms_norm";
  if (k.kind == "split_scan") return "scan";
  // amax/amin and max/min over a dimension (values, or values and indices): exact op names,
  // so the pointwise aten.maximum/minimum stay out.
  for (const std::string& op : k.aten_ops)
    if ((k.kind == "reduction" || k.kind == "persistent_reduction") &&
        (op == "aten.amax" || op == "aten.amin" || op == "aten.max" || op == "aten.min"))
      return "minmax_reduction";
  if (k.kind == "reduction" || k.kind == "persistent_reduction") return "reduction";
  if (k.kind == "pointwise") return "pointwise";
  return "other";
}

}  // namespace kopt::profile
