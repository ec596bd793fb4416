#include "profile/access.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "artifact/index_map.h"
#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::profile {

using py::Node;

bool gathers(const ir::Kernel& k) {
  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(k.source, k.name, k.name);
  } catch (const std::exception&) {
    return false;  // not parsed: nothing to say
  }
  // Names that hold a loaded value or anything computed from one, in program order (loops' bodies
  // included: Inductor assigns each name once per iteration).
  std::set<std::string> loaded;
  bool found = false;
  auto depends = [&](const Node* e) {
    return py::any_node(e, [&](const Node* m) {
      return ir::is_tl_call(m, "load") || (m->is("Name") && loaded.count(std::string(m->ident("id"))));
    });
  };
  py::visit(ks.entry, [&](const Node* s, const Node*) {
    if (ir::is_tl_call(s, "load") && !s->list("args").empty() && depends(s->list("args").front())) found = true;
    if (s->is("Assign") && depends(s->child("value")))
      for (const Node* t : s->list("targets"))
        py::walk(t, [&](const Node* m) {
          if (m->is("Name")) loaded.insert(std::string(m->ident("id")));
        });
    return found ? py::Step::Prune : py::Step::Descend;
  });
  return found;
}

using nlohmann::json;

namespace {

// A group of accesses that read the same rows: their column intervals.
struct Group {
  std::map<std::string, int64_t> rows;  // the row part's coefficients (in rows)
  int64_t row0 = 0;                     // its constant row
  std::vector<std::pair<int64_t, int64_t>> cols;  // [lo, hi] each
};

}  // namespace

std::optional<uint64_t> touched_elements(const ir::Kernel& k, size_t arg, const json& launch, bool stores) {
  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(k.source, k.name, k.name);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return touched_elements(k, ks, arg, launch, stores);
}

std::optional<uint64_t> touched_elements(const ir::Kernel& k, const ir::KernelSource& ks, size_t arg,
                                         const json& launch, bool stores) {
  const json args = launch.value("args", json::array());
  if (arg >= args.size() || !args[arg].contains("shape")) return std::nullopt;
  // The runtime parameters in order: the pointer's name, and each axis's numel from its argument.
  std::string pointer;
  std::map<std::string, int64_t> numel;
  size_t i = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) continue;
    if (i == arg) pointer = p.name;
    if (i < args.size() && p.name.ends_with("numel") && args[i].contains("value") && args[i]["value"].is_number_integer())
      numel[p.name.substr(0, p.name.size() - 5)] = args[i]["value"].get<int64_t>();  // "x", "r0_"
    ++i;
  }
  if (pointer.empty()) return std::nullopt;
  // The tensor's row stride: the smallest stride above 1 of a dimension longer than 1 (its storage
  // elements as the bound).
  const json& a = args[arg];
  int64_t row = 0, storage = 1;
  for (size_t d = 0; d < a["shape"].size(); ++d) {
    int64_t n = a["shape"][d].get<int64_t>(), s = d < a.value("stride", json::array()).size() ? a["stride"][d].get<int64_t>() : 1;
    if (n <= 0) return 0;
    storage *= n;
    if (n > 1 && s > 1 && (row == 0 || s < row)) row = s;
  }
  if (!ks.entry) return std::nullopt;
  // Each index digit's count of values [0, count): `x0 = xindex % R` -> R, `x1 = xindex // B` ->
  // ceil(numel / B), `x2 = (xindex // B) % R` -> R; the index itself -> numel.
  std::map<std::string, int64_t> digits;
  std::vector<Group> groups;
  bool unknown = false;
  py::visit(ks.entry, [&](const Node* s, const Node*) {
    if (s->is("Assign") && s->list("targets").size() == 1 && s->list("targets").front()->is("Name")) {
      std::string name(s->list("targets").front()->ident("id"));
      auto d = ir::axis_digit(name, s->child("value"));
      // "xindex" -> the `xnumel` argument, "r0_index" -> `r0_numel`.
      auto n = d ? numel.find(d->index.substr(0, d->index.size() - 5)) : numel.end();
      if (n != numel.end()) {
        int64_t runs = (n->second + d->digit.base - 1) / d->digit.base;
        digits[name] = {d->digit.radix > 0 ? std::min(d->digit.radix, runs) : runs};
      }
    }
    if (!ir::is_tl_call(s, stores ? "store" : "load") || s->list("args").empty()) return py::Step::Descend;
    auto addr = ir::affine(s->list("args").front());
    if (!addr || addr->coef.count(pointer) == 0) return py::Step::Descend;  // another pointer's access
    if (addr->coef[pointer] != 1) return unknown = true, py::Step::Descend;
    addr->coef.erase(pointer);
    Group g;
    int64_t lo = 0, hi = 0;
    auto split = [&](int64_t c, int64_t* q) {  // c = q * row + r, |r| < row: a small offset stays a column's
      *q = row ? c / row : 0;
      return c - *q * row;
    };
    lo = hi = split(addr->c, &g.row0);
    for (const auto& [name, coef] : addr->coef) {
      auto d = digits.find(name);
      if (d == digits.end()) return unknown = true, py::Step::Descend;  // not an index digit: a gather
      int64_t span = coef * (d->second - 1);
      if (row && coef % row == 0) {
        g.rows[name] = coef / row;
      } else if (row == 0 || std::abs(coef) < row) {
        (span >= 0 ? hi : lo) += span;
      } else {
        return unknown = true, py::Step::Descend;
      }
    }
    // A column part wider than a row walks across rows (a flat index over a contiguous tensor): counted
    // as it runs. Otherwise columns outside [0, row) are other rows' (an access masked there: RoPE's
    // `x0 - 64`, loaded only where x0 >= 64).
    int64_t width = row ? row : storage;
    if (hi - lo + 1 <= width) lo = std::max<int64_t>(lo, 0), hi = std::min(hi, width - 1);
    g.cols.push_back({lo, hi});
    for (Group& h : groups)
      if (h.rows == g.rows && h.row0 == g.row0) return h.cols.push_back(g.cols.front()), py::Step::Descend;
    groups.push_back(std::move(g));
    return py::Step::Descend;
  });
  if (unknown || groups.empty()) return std::nullopt;
  uint64_t total = 0;
  for (Group& g : groups) {
    uint64_t rows = 1;
    for (const auto& [name, coef] : g.rows) rows *= static_cast<uint64_t>(digits[name]);
    std::sort(g.cols.begin(), g.cols.end());
    uint64_t cols = 0;
    int64_t end = -1;  // the merged intervals' last column so far
    for (auto [lo, hi] : g.cols) {
      if (hi < lo || hi <= end) continue;
      cols += static_cast<uint64_t>(hi - std::max(lo, end + 1) + 1);
      end = hi;
    }
    total += rows * cols;
  }
  return std::min<uint64_t>(total, static_cast<uint64_t>(storage));
}

}  // namespace kopt::profile
