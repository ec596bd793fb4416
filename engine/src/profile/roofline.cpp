#include "profile/roofline.h"

#include <algorithm>
#include <map>
#include <set>

#include "verify/outputs.h"

namespace kopt::profile {

using nlohmann::json;

size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8}, {"int32", 4},
      {"int16", 2},   {"int8", 1},    {"uint8", 1},   {"bool", 1},     {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
      {"complex64", 8}, {"uint32", 4}, {"uint64", 8}, {"uint16", 2}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

uint64_t tensor_bytes(const json& arg) {
  if (!arg.contains("shape")) return 0;
  uint64_t numel = 1, span = 1;
  const json& shape = arg["shape"];
  const json stride = arg.value("stride", json::array());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d].get<int64_t>();
    if (n <= 0) return 0;
    numel *= static_cast<uint64_t>(n);
    int64_t s = d < stride.size() ? stride[d].get<int64_t>() : 1;
    span += static_cast<uint64_t>(n - 1) * static_cast<uint64_t>(std::max<int64_t>(s, 0));
  }
  return std::min(numel, span) * dtype_size(arg.value("dtype", ""));
}

Cost launch_cost(const ir::Kernel& k, const json& launch) {
  Cost c;
  std::vector<size_t> pure = verify::pure_output_args(k);
  std::set<size_t> written(pure.begin(), pure.end());
  std::set<std::string> mutated(k.mutated_args.begin(), k.mutated_args.end());
  std::vector<std::string> runtime;  // the runtime (non-constexpr) parameter names, in launch order
  for (const ir::KernelParam& p : k.signature)
    if (!p.is_constexpr) runtime.push_back(p.name);
  const json args = launch.value("args", json::array());
  for (size_t i = 0; i < args.size(); ++i) {
    uint64_t b = tensor_bytes(args[i]);
    if (!b) continue;
    bool in_place = i < runtime.size() && mutated.count(runtime[i]);
    if (written.count(i)) c.bytes_written += b;
    else if (in_place) c.bytes_read += b, c.bytes_written += b;
    else c.bytes_read += b;
  }
  // Triton kernels other than templates are memory-bound by construction (a few
  // arithmetic ops per element); templates (GEMMs) are counted by nobody yet.
  c.flops_known = k.kind != "template";
  return c;
}

std::optional<double> floor_ms(const Cost& c, const json& ceilings) {
  if (!c.flops_known || !ceilings.is_object()) return std::nullopt;
  double bw = ceilings.value("copy_bytes_per_s", 0.0);
  if (bw <= 0) return std::nullopt;
  return static_cast<double>(c.bytes()) / bw * 1e3;
}

}  // namespace kopt::profile
