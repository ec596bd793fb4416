#include "agents/coder/contiguity.h"

#include <map>
#include <optional>
#include <utility>

#include "artifact/index_map.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents {

namespace {

using py::Node;

// The index names Inductor gives each tiled axis, and the block constexpr that tiles it.
const std::pair<const char*, const char*> kAxes[] = {
    {"xindex", "XBLOCK"}, {"yindex", "YBLOCK"}, {"zindex", "ZBLOCK"}, {"r0_index", "R0_BLOCK"}};

bool is_tl_call(const Node* n, std::string_view fn) {
  if (!n || !n->is("Call")) return false;
  const Node* f = n->child("func");
  return f && f->is("Attribute") && f->ident("attr") == fn && f->child("value") && f->child("value")->is("Name") &&
         f->child("value")->ident("id") == "tl";
}

// The axis a name's assignment makes a stride-1 digit of: `x0 = xindex` or `x0 = xindex % R`.
std::optional<ContiguousRun> unit_digit(const std::string& name, const Node* value) {
  for (const auto& [index, block] : kAxes) {
    if (value && value->is("Name") && value->ident("id") == index) return ContiguousRun{block, 0};
    if (auto d = ir::digit(name, value, index); d && d->base == 1) return ContiguousRun{block, d->radix};
  }
  return std::nullopt;
}

}  // namespace

std::vector<ContiguousRun> contiguous_runs(const ir::Kernel& k) {
  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(k.source, k.name, k.name);
  } catch (const std::exception&) {
    return {};  // not parsed: no ranking hint
  }
  if (!ks.entry) return {};
  std::map<std::string, ContiguousRun> digits;
  std::vector<ContiguousRun> out;
  py::visit(ks.entry, [&](const Node* s, const Node*) {
    if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets").front()->is("Name")) {
      std::string name(s->list("targets").front()->ident("id"));
      if (auto d = unit_digit(name, s->child("value"))) digits[name] = *d;
    }
    if ((is_tl_call(s, "load") || is_tl_call(s, "store")) && !s->list("args").empty()) {
      if (auto a = ir::affine(s->list("args").front()))
        for (const auto& [name, coef] : a->coef)
          if ((coef == 1 || coef == -1) && digits.count(name)) {
            out.push_back(digits[name]);
            break;
          }
    }
    return py::Step::Descend;
  });
  return out;
}

}  // namespace kopt::agents
