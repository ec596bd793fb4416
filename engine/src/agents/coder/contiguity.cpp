#include "agents/coder/contiguity.h"

#include <map>
#include <optional>
#include <utility>

#include "artifact/index_map.h"
#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents {

namespace {

using py::Node;

// The block constexpr that tiles each of Inductor's index names.
const std::map<std::string, std::string, std::less<>> kBlocks = {
    {"xindex", "XBLOCK"}, {"yindex", "YBLOCK"}, {"zindex", "ZBLOCK"}, {"r0_index", "R0_BLOCK"}};

// The axis a name's assignment makes a stride-1 digit of: `x0 = xindex` or `x0 = xindex % R`.
std::optional<ContiguousRun> unit_digit(const std::string& name, const Node* value) {
  auto d = ir::axis_digit(name, value);
  if (!d || d->digit.base != 1) return std::nullopt;
  return ContiguousRun{kBlocks.at(d->index), d->digit.radix};
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
    if ((ir::is_tl_call(s, "load") || ir::is_tl_call(s, "store")) && !s->list("args").empty()) {
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
