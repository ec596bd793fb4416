#include "artifact/pin_config.h"
#include "artifact/pin_config.h"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "artifact/ir.h"
#include "artifact/literal.h"

namespace kopt::ir {

namespace {

const std::vector<std::string> kOrder = {"XBLOCK", "YBLOCK", "ZBLOCK", "R0_BLOCK", "R1_BLOCK",
                                         "num_warps", "num_stages"};

template <class F>
void in_order(const nlohmann::json& config, F f) {
  for (const std::string& k : kOrder)
    if (config.contains(k)) f(k, config[k]);
  for (const auto& [k, v] : config.items())
    if (std::find(kOrder.begin(), kOrder.end(), k) == kOrder.end()) f(k, v);
}

}  // namespace

std::optional<nlohmann::json> pinned_config(const KernelSource& ks) {
  if (!ks.heuristics || dotted_name(ks.heuristics->child("func")) != "triton_heuristics.fixed_config")
    return std::nullopt;
  for (const py::Node* kw : ks.heuristics->list("keywords"))
    if (kw->ident("arg") == "config") return literal_to_json(*ks.module, kw->child("value"));
  return std::nullopt;
}

std::string describe_config(const nlohmann::json& config) {
  std::string out;
  in_order(config, [&](const std::string& k, const nlohmann::json& v) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v.dump());
  });
  return out;
}

std::string pin_config(const std::string& source, const std::string& name, const nlohmann::json& config) {
  KernelSource ks = parse_kernel_source(source, name, name);
  const py::Node* dec = ks.heuristics;
  if (!dec || !dec->is("Call")) throw std::invalid_argument(name + ": no triton_heuristics decorator call to pin");
  std::string triton_meta, inductor_meta;
  for (const py::Node* kw : dec->list("keywords")) {
    const py::Node* v = kw->child("value");
    std::string text = source.substr(v->begin.offset, v->end.offset - v->begin.offset);
    if (kw->ident("arg") == "triton_meta") triton_meta = text;
    if (kw->ident("arg") == "inductor_meta") inductor_meta = text;
  }
  if (triton_meta.empty() || inductor_meta.empty())
    throw std::invalid_argument(name + ": the heuristics decorator lacks triton_meta or inductor_meta");
  std::string dict;
  in_order(config, [&](const std::string& k, const nlohmann::json& v) {
    dict += fmt::format("{}'{}': {}", dict.empty() ? "" : ", ", k, v.dump());
  });
  std::string call = fmt::format(
      "triton_heuristics.fixed_config(\n    config={{{}}},\n    filename=__file__,\n    triton_meta={},\n"
      "    inductor_meta={}\n)",
      dict, triton_meta, inductor_meta);
  return source.substr(0, dec->begin.offset) + call + source.substr(dec->end.offset);
}

std::optional<std::string> pin_baseline_config(const Kernel& k, const std::string& source,
                                               const nlohmann::json& config) {
  // Templates, scans, user kernels and combo kernels launch with grids or arguments of their own.
  if (!config.is_object() || (k.kind != "pointwise" && k.kind != "reduction" && k.kind != "persistent_reduction"))
    return std::nullopt;
  try {
    return pin_config(source, k.name, config);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

}  // namespace kopt::ir
