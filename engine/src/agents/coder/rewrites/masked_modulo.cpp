#include "agents/coder/rewrites/masked_modulo.h"

#include <map>
#include <vector>

#include "agents/coder/rewrites/source_edit.h"
#include "artifact/literal.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

using py::Node;
using namespace detail;

namespace {

using Bound = std::map<std::string, const Node*>;  // bound_once: name -> its `name = value` statement

// `e`, or the value a name bound once stands for.
const Node* through(const Node* e, const Bound& bound) {
  if (e && e->is("Name"))
    if (auto it = bound.find(std::string(e->ident("id"))); it != bound.end()) return it->second->child("value");
  return e;
}

// An integer constant, directly, through a name, or as `tl.full(shape, C, dtype)`.
std::optional<int64_t> int_value(const Node* e, const Bound& bound) {
  e = through(e, bound);
  if (is_tl_call(e, "full") && e->list("args").size() == 3) e = e->list("args")[1];
  return e ? ir::int_literal(e) : std::nullopt;
}

// The expression's text, through one name binding (`tmp0` -> `r0_1 + 243769*x0`) and an integer cast
// Inductor puts on an index it compares (`(r0_1 + 64690*x0).to(tl.int32)`: the index's own type, so
// the same value).
std::string resolved_text(const std::string& source, const Node* e, const Bound& bound) {
  e = through(e, bound);
  const Node* type = nullptr;
  if (const Node* v = ir::converted(e, &type); v && (is_tl(type, "int32") || is_tl(type, "int64"))) e = v;
  return text_of(source, e);
}

}  // namespace

std::optional<MaskedModulo> masked_modulo(const std::string& source, const std::string& name, std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  const Bound bound = bound_once(ks->entry);
  std::vector<py::Edit> edits;
  py::walk(ks->entry, [&](const Node* c) {
    if (!is_tl_call(c, "load") || c->list("args").empty()) return;
    const Node* ptr = c->list("args")[0];
    if (!ptr->is("BinOp") || ptr->ident("op") != "Add") return;
    const Node* index = ptr->child("right");
    if (!index->is("BinOp") || index->ident("op") != "Mod") return;
    auto modulus = int_value(index->child("right"), bound);
    if (!modulus || *modulus <= 0) return;
    const Node* mask = access_mask(c);
    if (!mask) return;
    std::string e = text_of(source, index->child("left"));
    std::vector<const Node*> terms;
    and_terms(mask, terms);
    for (const Node* t : terms) {
      const Node* cmp = through(t, bound);
      if (!cmp->is("Compare") || cmp->list("ops").size() != 1 || cmp->list("ops")[0]->type != "Lt") continue;
      if (resolved_text(source, cmp->child("left"), bound) != e) continue;
      if (int_value(cmp->list("comparators")[0], bound) != modulus) continue;
      edits.push_back({index->begin.offset, index->end.offset, "(" + e + ")"});
      return;
    }
  });
  if (edits.empty()) {
    say(why, "masked modulo: no load index is a modulo that its mask bounds");
    return std::nullopt;
  }
  return MaskedModulo{py::apply_edits(source, edits), static_cast<int>(edits.size())};
}

}  // namespace kopt::agents::rewrites
