#include "agents/coder/rewrites/one_plus.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"
#include "verify/outputs.h"

namespace kopt::agents::rewrites {

using py::Node;
using py::Edit;
using py::walk;
using namespace detail;

namespace {

// Numerical Recipes' erfcc: erfc(z) for z >= 0 as t * exp(-z^2 + P(t)), t = 1 / (1 + z/2).
constexpr const char* kErfcPoly =
    "-1.26551223 + {t} * (1.00002368 + {t} * (0.37409196 + {t} * (0.09678418 + {t} * (-0.18628806 + {t} * "
    "(0.27886807 + {t} * (-1.13520398 + {t} * (1.48851587 + {t} * (-0.82215223 + {t} * 0.17087277))))))))";

// Abramowitz-Stegun 7.1.28's polynomial: erfc(z) = 1 / P(z)^16 for z >= 0, absolute error below 3e-7.
constexpr const char* kErfcRational =
    "1.0 + {z} * (0.0705230784 + {z} * (0.0422820123 + {z} * (0.0092705272 + {z} * (0.0001520143 + {z} * "
    "(0.0002765672 + {z} * 0.0000430638)))))";

// Calls `libdevice.<fn>(NAME)`: the function's name, or empty.
std::string libdevice_fn(const Node* v) {
  if (!v || !v->is("Call") || v->list("args").size() != 1 || !v->list("keywords").empty()) return {};
  const Node* f = v->child("func");
  if (!f || !f->is("Attribute") || !is_name(f->child("value"), "libdevice")) return {};
  if (!v->list("args")[0]->is("Name")) return {};
  std::string fn(f->ident("attr"));
  return fn == "erf" || fn == "tanh" ? fn : std::string();
}

// `tl.full(shape, 1.0, dtype)` (or 1).
bool is_one(const Node* v) {
  if (!is_tl_call(v, "full") || v->list("args").size() < 2) return false;
  const Node* c = v->list("args")[1];
  if (!c->is("Constant") || (c->const_kind != py::ConstKind::Float && c->const_kind != py::ConstKind::Int)) return false;
  try {
    return std::stod(c->value) == 1.0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool stores_half_only(const ir::Kernel& k) {
  std::vector<size_t> stored = verify::pointer_writes(k).stored;
  std::vector<const ir::KernelParam*> runtime;
  for (const ir::KernelParam& p : k.signature)
    if (!p.is_constexpr) runtime.push_back(&p);
  return !stored.empty() && std::all_of(stored.begin(), stored.end(), [&](size_t i) {
    return i < runtime.size() && (runtime[i]->dtype == "*bf16" || runtime[i]->dtype == "*fp16");
  });
}

std::optional<OnePlus> one_plus(const std::string& source, const std::string& name, bool half_outputs,
                                std::string* why) {
  if (source.find("fp64") != std::string::npos || source.find("tl.float64") != std::string::npos) {
    say(why, "one plus: a float64 kernel");
    return std::nullopt;
  }
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  // The names bound once (a name bound more than once is not one value) and their definitions.
  const std::map<std::string, const Node*> def = bound_once(ks->entry);
  auto once = [&](const std::string& id) { return def.count(id) > 0; };
  std::set<std::string> ones;
  std::map<std::string, std::string> fns;  // value name -> "erf" / "tanh"
  for (const auto& [id, stmt] : def) {
    const Node* v = stmt->child("value");
    if (is_one(v)) ones.insert(id);
    std::string fn = libdevice_fn(v);
    if (!fn.empty() && once(std::string(v->list("args")[0]->ident("id")))) fns[id] = fn;
  }
  if (fns.empty()) {
    say(why, "one plus: no libdevice.erf / libdevice.tanh of a value bound once");
    return std::nullopt;
  }
  // Each use of such a value: `S = V + one` / `S = one + V`, or the value is left alone.
  std::map<std::string, std::vector<const Node*>> sums;  // value name -> the BinOps that add one to it
  std::set<std::string> other_use;
  py::visit(ks->entry, [&](const Node* n, const Node* parent) {
    if (!n->is("Name") || n->ident("ctx") != "Load") return py::Step::Descend;
    std::string id(n->ident("id"));
    if (!fns.count(id)) return py::Step::Descend;
    bool ok = parent && parent->is("BinOp") && parent->ident("op") == "Add";
    if (ok) {
      const Node* other = parent->child("left") == n ? parent->child("right") : parent->child("left");
      ok = other && other->is("Name") && ones.count(std::string(other->ident("id")));
    }
    if (ok) sums[id].push_back(parent);
    else other_use.insert(id);
    return py::Step::Descend;
  });
  std::vector<Edit> edits;
  OnePlus out;
  out.half_fit = half_outputs;
  int k = 0;
  for (const auto& [id, fn] : fns) {
    if (other_use.count(id) || !sums.count(id)) continue;
    const Node* stmt = def.at(id);
    std::string arg(stmt->child("value")->list("args")[0]->ident("id"));
    std::string ind(stmt->begin.col, ' ');
    std::string sum;
    if (fn == "erf") {
      // c = erfc(|arg|); the sum is 2 - c or c by the sign.
      std::string z = fmt::format("_kopt_z{}", k), c = fmt::format("_kopt_c{}", k);
      std::string lines;
      if (half_outputs) {
        // No exp: the H200 ran a bf16 GELU this way at 1.02x a copy's time (benchmarks/gelu_forms.py;
        // the exp form 1.24x, libdevice 1.37x).
        std::string p = fmt::format("_kopt_p{}", k);
        lines = fmt::format("{i}{p} = {poly}\n{i}{p} = {p} * {p}\n{i}{p} = {p} * {p}\n{i}{p} = {p} * {p}\n"
                            "{i}{c} = 1.0 / ({p} * {p})",
                            fmt::arg("p", p), fmt::arg("c", c), fmt::arg("i", ind),
                            fmt::arg("poly", fmt::format(fmt::runtime(kErfcRational), fmt::arg("z", z))));
      } else {
        std::string t = fmt::format("_kopt_t{}", k);
        lines = fmt::format("{i}{t} = 1.0 / (1.0 + 0.5 * {z})\n{i}{c} = {t} * tl.exp(-{z} * {z} + {poly})",
                            fmt::arg("z", z), fmt::arg("t", t), fmt::arg("c", c), fmt::arg("i", ind),
                            fmt::arg("poly", fmt::format(fmt::runtime(kErfcPoly), fmt::arg("t", t))));
      }
      edits.push_back({stmt->begin.offset, stmt->end.offset, fmt::format("{} = tl.abs({})\n{}", z, arg, lines)});
      sum = fmt::format("tl.where({} >= 0, 2.0 - {}, {})", arg, c, c);
      ++out.erf;
    } else {
      std::string s = fmt::format("_kopt_s{}", k);
      edits.push_back({stmt->begin.offset, stmt->end.offset, fmt::format("{} = 2.0 / (1.0 + tl.exp(-2.0 * {}))", s, arg)});
      sum = s;
      ++out.tanh;
    }
    for (const Node* b : sums[id]) edits.push_back({b->begin.offset, b->end.offset, sum});
    ++k;
  }
  if (edits.empty()) {
    say(why, "one plus: the erf / tanh values are used other than as 1 + value");
    return std::nullopt;
  }
  out.source = py::apply_edits(source, edits);
  if (!parse(out.source, name, why)) return std::nullopt;
  return out;
}

}  // namespace kopt::agents::rewrites
