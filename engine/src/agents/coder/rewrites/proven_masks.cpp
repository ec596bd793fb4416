#include "agents/coder/rewrites/proven_masks.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/x_index.h"
#include "artifact/literal.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

using py::Edit;
using py::Node;
using namespace detail;

namespace {

// Bounds far inside int64 so that sums and products of two of them cannot overflow; anything
// wider is "unknown".
constexpr int64_t kLimit = int64_t{1} << 40;

struct Range {
  int64_t lo, hi;
};

enum class Truth { Unknown, True, False };

struct Env {
  std::map<std::string, Range> ints;
  std::map<std::string, Truth> bools;
};

std::optional<Range> bounded(int64_t lo, int64_t hi) {
  if (lo < -kLimit || hi > kLimit || lo > hi) return std::nullopt;
  return Range{lo, hi};
}

std::optional<Range> range_of(const Node* e, const Env& env);

// `tl.full(shape, c, tl.int32 / tl.int64)` and `v.to(tl.int32 / tl.int64)`: an integer's range, or
// nothing. A cast to int32 keeps the value only when the range fits 32 bits.
std::optional<Range> call_range(const Node* e, const Env& env) {
  const auto& args = e->list("args");
  auto int_type = [](const Node* t) { return is_tl(t, "int32") ? 32 : is_tl(t, "int64") ? 64 : 0; };
  if (is_tl_call(e, "full") && args.size() == 3 && int_type(args[2]))
    if (auto c = ir::int_literal(args[1])) return bounded(*c, *c);
  const Node* type = nullptr;
  if (const Node* v = ir::converted(e, &type)) {
    int bits = int_type(type);
    auto r = bits ? range_of(v, env) : std::nullopt;
    constexpr int64_t kInt32Max = (int64_t{1} << 31) - 1;
    if (r && (bits == 64 || (r->lo >= -kInt32Max - 1 && r->hi <= kInt32Max))) return r;
  }
  return std::nullopt;
}

std::optional<Range> range_of(const Node* e, const Env& env) {
  if (!e) return std::nullopt;
  if (auto c = ir::int_literal(e)) return bounded(*c, *c);
  if (e->is("Name")) {
    auto it = env.ints.find(std::string(e->ident("id")));
    if (it == env.ints.end()) return std::nullopt;
    return it->second;
  }
  if (e->is("Call")) return call_range(e, env);
  if (!e->is("BinOp")) return std::nullopt;
  auto l = range_of(e->child("left"), env), r = range_of(e->child("right"), env);
  if (!l || !r) return std::nullopt;
  std::string_view op = e->ident("op");
  if (op == "Add") return bounded(l->lo + r->lo, l->hi + r->hi);
  if (op == "Sub") return bounded(l->lo - r->hi, l->hi - r->lo);
  if (op == "Mult") {
    int64_t p[] = {l->lo * r->lo, l->lo * r->hi, l->hi * r->lo, l->hi * r->hi};
    return bounded(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
  }
  // Triton's integer // and % truncate toward zero; on a non-negative value by a positive
  // constant that is Python's floor, and the bounds below hold.
  if ((op == "FloorDiv" || op == "Mod") && l->lo >= 0 && r->lo == r->hi && r->lo > 0) {
    const int64_t d = r->lo;
    if (op == "FloorDiv") return bounded(l->lo / d, l->hi / d);
    if (l->hi < d) return l;
    return bounded(0, d - 1);
  }
  return std::nullopt;
}

Truth truth_of(const Node* e, const Env& env) {
  if (!e) return Truth::Unknown;
  if (e->is("Constant")) {
    if (e->const_kind == py::ConstKind::True) return Truth::True;
    if (e->const_kind == py::ConstKind::False) return Truth::False;
    return Truth::Unknown;
  }
  if (e->is("Name")) {
    auto it = env.bools.find(std::string(e->ident("id")));
    return it == env.bools.end() ? Truth::Unknown : it->second;
  }
  if (e->is("BinOp") && (e->ident("op") == "BitAnd" || e->ident("op") == "BitOr")) {
    Truth l = truth_of(e->child("left"), env), r = truth_of(e->child("right"), env);
    if (e->ident("op") == "BitAnd") {
      if (l == Truth::False || r == Truth::False) return Truth::False;
      return l == Truth::True && r == Truth::True ? Truth::True : Truth::Unknown;
    }
    if (l == Truth::True || r == Truth::True) return Truth::True;
    return l == Truth::False && r == Truth::False ? Truth::False : Truth::Unknown;
  }
  if (!e->is("Compare") || e->list("ops").size() != 1) return Truth::Unknown;
  auto l = range_of(e->child("left"), env), r = range_of(e->list("comparators")[0], env);
  if (!l || !r) return Truth::Unknown;
  std::string_view op = e->list("ops")[0]->type;
  auto decide = [](bool always, bool never) { return always ? Truth::True : never ? Truth::False : Truth::Unknown; };
  if (op == "Lt") return decide(l->hi < r->lo, l->lo >= r->hi);
  if (op == "LtE") return decide(l->hi <= r->lo, l->lo > r->hi);
  if (op == "Gt") return decide(l->lo > r->hi, l->hi <= r->lo);
  if (op == "GtE") return decide(l->lo >= r->hi, l->hi < r->lo);
  return Truth::Unknown;
}

// A term's text as an operand of `&`: anything looser than a name or call gets its parentheses.
std::string operand(const std::string& source, const Node* e) {
  std::string t = text_of(source, e);
  bool atom = e->is("Name") || e->is("Call") || e->is("Attribute") || e->is("Subscript") || e->is("Constant");
  return atom ? t : "(" + t + ")";
}

}  // namespace

std::optional<ProvenMasks> proven_masks(const std::string& source, const std::string& name, std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, "proven masks: " + reason);
    return std::optional<ProvenMasks>{};
  };
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  const Node* entry = ks->entry;
  auto x = x_index(source, entry, "proven masks", why);
  if (!x) return std::nullopt;
  // A name bound more than once is not one value: it is left unknown.
  const std::map<std::string, const Node*> once = bound_once(entry);
  Env env;
  env.ints["xindex"] = Range{0, x->numel - 1};  // lanes past xnumel are masked by xmask (kept below)
  env.ints["xnumel"] = Range{x->numel, x->numel};
  for (const Node* s : x->others) {
    if (!s->is("Assign") || s->list("targets").size() != 1 || !s->list("targets")[0]->is("Name")) continue;
    std::string target(s->list("targets")[0]->ident("id"));
    if (!once.count(target)) continue;
    const Node* v = s->child("value");
    if (auto r = range_of(v, env)) env.ints[target] = *r;
    else if (Truth t = truth_of(v, env); t != Truth::Unknown) env.bools[target] = t;
  }
  ProvenMasks out;
  std::vector<Edit> edits;
  py::walk(entry, [&](const Node* n) {
    if (!is_tl_call(n, "load")) return;
    const Node* mask = access_mask(n);
    if (!mask) return;
    std::vector<const Node*> terms, kept;
    and_terms(mask, terms);
    // Only a mask that keeps the kernel's x bound (or a kernel without one) may lose terms: the
    // ranges hold for xindex < xnumel only.
    bool has_xmask = std::any_of(terms.begin(), terms.end(), [](const Node* t) { return is_name(t, "xmask"); });
    if (!has_xmask && !x->mask_is_full) return;
    for (const Node* t : terms)
      if (is_name(t, "xmask") || truth_of(t, env) != Truth::True) kept.push_back(t);
    if (kept.size() == terms.size()) return;
    std::string text;
    for (const Node* t : kept) text += (text.empty() ? "" : " & ") + operand(source, t);
    if (text.empty()) text = "xmask";  // every term proven: the full x mask stands in
    out.dropped += static_cast<int>(terms.size() - kept.size());
    ++out.loads;
    edits.push_back({mask->begin.offset, mask->end.offset, text});
  });
  if (edits.empty()) return no("no load mask has a term proven true for every element");
  out.source = py::apply_edits(source, edits);
  return out;
}

}  // namespace kopt::agents::rewrites
