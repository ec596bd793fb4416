#include "agents/coder/templates/templates.h"

#include <stdexcept>

#include <fmt/format.h>

#include "artifact/pin_config.h"

#include "agents/coder/templates/column_reduction.h"
#include "agents/coder/templates/pool2d.h"
#include "agents/coder/templates/row_norm.h"
#include "agents/coder/templates/row_softmax.h"
#include "agents/coder/templates/scan_rows.h"
#include "agents/coder/templates/scan_split.h"

namespace kopt::agents::templates {

namespace {

// The template library, registered once: each template's families, the kernel kinds it takes (any
// when empty: a kernel of the family but another kind is the next entry's), and how it instantiates.
// has_template and instantiate both read it; the first entry that takes a kernel is its template.
struct Template {
  const char* name;
  bool (*families)(const std::string& family);
  const char* kind;  // only kernels of this kind ("" = any)
  std::vector<Candidate> (*instantiate)(const KernelProfile& k, std::string* why_not);
};

bool softmax_family(const std::string& f) { return f == "softmax" || f == "log_softmax"; }
bool pooling_family(const std::string& f) { return f == "pooling"; }
bool scan_family(const std::string& f) { return f == "scan"; }
bool column_family(const std::string& f) {
  return f == "reduction" || f == "arg_reduction" || f == "minmax_reduction";
}

const Template kTemplates[] = {
    {"row_softmax", softmax_family, "", row_softmax},
    {"pool2d", pooling_family, "", pool2d},
    {"row_norm", is_row_norm_family, "", row_norm},
    {"scan_split", scan_family, "split_scan", scan_split},
    {"scan_rows", scan_family, "", scan_rows},
    {"column_reduction", column_family, "", column_reduction},
};

}  // namespace

bool has_template(const std::string& family) {
  for (const Template& t : kTemplates)
    if (t.families(family)) return true;
  return false;
}

std::vector<Candidate> decline(std::string* why_not, const std::string& why) {
  if (why_not) *why_not = why;
  return {};
}

bool is_contiguous(const nlohmann::json& t) {
  if (!t.contains("shape") || !t.contains("stride") || t["shape"].size() != t["stride"].size()) return false;
  int64_t expect = 1;
  for (size_t d = t["shape"].size(); d-- > 0;) {
    int64_t n = t["shape"][d];
    if (n != 1 && t["stride"][d].get<int64_t>() != expect) return false;
    expect *= n;
  }
  return true;
}

std::vector<Candidate> instantiate(const KernelProfile& k, std::string* why_not) {
  for (const Template& t : kTemplates)
    if (t.families(k.family) && (!*t.kind || k.kernel->kind == t.kind)) return t.instantiate(k, why_not);
  return decline(why_not, "no template for family " + k.family);
}

std::string replace_entry(const ir::Kernel& k, const std::string& entry_def) {
  ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
  if (!ks.heuristics) throw std::invalid_argument(k.name + ": no heuristics decorator to keep");
  // Everything before the first decorator of the entry (imports, set_driver_to_gpu), the
  // heuristics decorator as written, then the new function.
  const py::Node* first = ks.entry->list("decorator_list").front();
  size_t start = first->begin.offset;
  while (start > 0 && k.source[start - 1] != '@') --start;
  std::string prefix = k.source.substr(0, start - 1);
  std::string decorator =
      k.source.substr(ks.heuristics->begin.offset, ks.heuristics->end.offset - ks.heuristics->begin.offset);
  return prefix + "@" + decorator + "\n@triton.jit\n" + entry_def;
}

std::string entry_params(const ir::Kernel& k) {
  std::string params;
  for (const ir::KernelParam& p : k.signature)
    params += fmt::format("{}{}{}", params.empty() ? "" : ", ", p.name, p.is_constexpr ? " : tl.constexpr" : "");
  return params;
}

Candidate instance(const ir::Kernel& k, const std::string& family, const std::string& source,
                   const nlohmann::json& config, const std::string& description) {
  Candidate c;
  c.origin = "template:" + family;
  c.description = description;
  c.source = ir::pin_config(source, k.name, config);
  c.config = config;
  return c;
}

}  // namespace kopt::agents::templates
