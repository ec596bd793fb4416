#include "agents/coder/rewrites/masked_modulo.h"

#include <map>
#include <vector>

#include "agents/coder/rewrites/source_edit.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

using py::Node;
using namespace detail;

namespace {

// Names bound exactly once in the kernel, and the value each is bound to.
std::map<std::string, const Node*> single_bindings(const Node* entry) {
  std::map<std::string, int> count;
  std::map<std::string, const Node*> value;
  py::walk(entry, [&](const Node* n) {
    if (n->is("Name") && n->ident("ctx") == "Store") ++count[std::string(n->ident("id"))];
    if (n->is("Assign") && n->list("targets").size() == 1 && n->list("targets")[0]->is("Name"))
      value[std::string(n->list("targets")[0]->ident("id"))] = n->child("value");
  });
  std::map<std::string, const Node*> out;
  for (const auto& [name, v] : value)
    if (count[name] == 1) out[name] = v;
  return out;
}

std::optional<int64_t> int_value(const Node* e, const std::map<std::string, const Node*>& bound) {
  if (e && e->is("Name"))
    if (auto it = bound.find(std::string(e->ident("id"))); it != bound.end()) e = it->second;
  if (e && e->is("Constant") && e->const_kind == py::ConstKind::Int) return std::stoll(e->value);
  // `tl.full(shape, C, tl.int32 / tl.int64)`
  if (is_tl_call(e, "full") && e->list("args").size() == 3) {
    const Node* c = e->list("args")[1];
    if (c->is("Constant") && c->const_kind == py::ConstKind::Int) return std::stoll(c->value);
  }
  return std::nullopt;
}

// The expression's text, through one name binding (`tmp0` -> `r0_1 + 243769*x0`) and an integer cast
// Inductor puts on an index it compares (`(r0_1 + 64690*x0).to(tl.int32)`: the index's own type, so
// the same value).
std::string resolved_text(const std::string& source, const Node* e, const std::map<std::string, const Node*>& bound) {
  if (e->is("Name"))
    if (auto it = bound.find(std::string(e->ident("id"))); it != bound.end()) e = it->second;
  if (e->is("Call") && e->list("args").size() == 1 && e->list("keywords").empty()) {
    const Node* f = e->child("func");
    const Node* t = e->list("args")[0];
    if (f && f->is("Attribute") && f->ident("attr") == "to" && (is_tl(t, "int32") || is_tl(t, "int64")))
      e = f->child("value");
  }
  return text_of(source, e);
}

}  // namespace

std::optional<MaskedModulo> masked_modulo(const std::string& source, const std::string& name, std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  auto bound = single_bindings(ks->entry);
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
      const Node* cmp = t;
      if (t->is("Name"))
        if (auto it = bound.find(std::string(t->ident("id"))); it != bound.end()) cmp = it->second;
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
