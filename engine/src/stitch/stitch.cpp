#include "stitch/stitch.h"

#include <set>

#include "artifact/pin_config.h"
#include "artifact/pyparse/edit.h"
#include "util/error.h"

namespace kopt::stitch {

std::string triple_quoted(const std::string& source) {
  // Escape backslashes, and any quote that could end the literal early: one
  // followed by another quote, or the last character.
  std::string out = "'''";
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\\') out += "\\\\";
    else if (c == '\'' && (i + 1 == source.size() || source[i + 1] == '\'')) out += "\\'";
    else out += c;
  }
  out += "'''";
  return out;
}

namespace {

void check_replacement(const ir::Kernel& k, const Replacement& r) {
  ir::KernelSource ks = ir::parse_kernel_source(r.source, k.name, r.origin);
  size_t same_name = 0;
  for (const py::Node* f : ks.jit_functions)
    if (f->ident("name") == k.entry) ++same_name;
  if (ks.jit_functions.empty())
    throw UserError(fmt::format("{}: no @triton.jit function; a replacement for `{}` must define `def {}(...)`",
                                r.origin, k.name, k.entry));
  if (same_name == 0)
    throw UserError(fmt::format("{}: defines no @triton.jit function named `{}`; the replacement must keep the "
                                "kernel's name so its launch sites stay valid",
                                r.origin, k.entry));
  if (same_name > 1)
    throw UserError(fmt::format("{}: defines `{}` {} times; give exactly one kernel of that name", r.origin, k.entry,
                                same_name));
}

}  // namespace

Pins pins_of(const nlohmann::json& launch_records) {
  Pins pins;
  for (const nlohmann::json& l : launch_records)
    if (l.is_object() && l.contains("config") && l["config"].is_object()) pins.emplace(l.value("name", ""), l["config"]);
  return pins;
}

std::string stitch(const ir::Artifact& art, const std::vector<Replacement>& reps, const Pins& pins,
                   const std::vector<RegionEdit>& regions) {
  std::vector<py::Edit> edits;
  std::set<const ir::Kernel*> seen;
  for (const Replacement& r : reps) {
    const ir::Kernel* k = art.find_kernel(r.kernel);
    if (!k) {
      std::string names;
      for (const ir::Kernel& x : art.kernels) names += (names.empty() ? "" : ", ") + x.name;
      throw UserError(fmt::format("--replace {}: no kernel of that name in {} (kernels: {})", r.kernel, art.path,
                                  names.empty() ? "none" : names));
    }
    if (!seen.insert(k).second)
      throw UserError(fmt::format("--replace {}: kernel `{}` is replaced twice; give one replacement per kernel",
                                  r.kernel, k->name));
    check_replacement(*k, r);
    edits.push_back({k->literal.begin.offset, k->literal.end.offset, triple_quoted(r.source)});
  }
  for (const RegionEdit& r : regions) {
    std::vector<py::Edit> more = region_edits(art, r);
    edits.insert(edits.end(), more.begin(), more.end());
  }
  if (!reps.empty() || !regions.empty())
    for (const ir::Kernel& k : art.kernels) {
      auto pin = pins.find(k.name);
      if (seen.count(&k) || pin == pins.end()) continue;
      if (auto pinned = ir::pin_baseline_config(k, k.source, pin->second))
        edits.push_back({k.literal.begin.offset, k.literal.end.offset, triple_quoted(*pinned)});
    }
  return py::apply_edits(art.module->source(), std::move(edits));
}

}  // namespace kopt::stitch
