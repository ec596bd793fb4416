#include "profile/access.h"

#include <functional>
#include <set>
#include <string>

namespace kopt::profile {

namespace {

using py::Node;

void walk(const Node* n, const std::function<void(const Node*)>& f) {
  if (!n) return;
  f(n);
  for (const py::Field& fl : n->fields) {
    if (fl.kind == py::Field::Kind::Child) walk(fl.child, f);
    if (fl.kind == py::Field::Kind::List)
      for (const Node* c : fl.list) walk(c, f);
  }
}

bool is_load(const Node* n) {
  if (!n || !n->is("Call")) return false;
  const Node* f = n->child("func");
  return f && f->is("Attribute") && f->ident("attr") == "load" && f->child("value") && f->child("value")->is("Name") &&
         f->child("value")->ident("id") == "tl";
}

}  // namespace

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
    bool d = false;
    walk(e, [&](const Node* m) { d = d || is_load(m) || (m->is("Name") && loaded.count(std::string(m->ident("id")))); });
    return d;
  };
  walk(ks.entry, [&](const Node* s) {
    if (is_load(s) && !s->list("args").empty() && depends(s->list("args").front())) found = true;
    if (s->is("Assign") && depends(s->child("value")))
      for (const Node* t : s->list("targets"))
        walk(t, [&](const Node* m) {
          if (m->is("Name")) loaded.insert(std::string(m->ident("id")));
        });
  });
  return found;
}

}  // namespace kopt::profile
