#include "profile/access.h"

#include <set>
#include <string>

#include "artifact/pyparse/visit.h"

namespace kopt::profile {

namespace {

using py::Node;

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
    return py::any_node(e, [&](const Node* m) {
      return is_load(m) || (m->is("Name") && loaded.count(std::string(m->ident("id"))));
    });
  };
  py::visit(ks.entry, [&](const Node* s, const Node*) {
    if (is_load(s) && !s->list("args").empty() && depends(s->list("args").front())) found = true;
    if (s->is("Assign") && depends(s->child("value")))
      for (const Node* t : s->list("targets"))
        py::walk(t, [&](const Node* m) {
          if (m->is("Name")) loaded.insert(std::string(m->ident("id")));
        });
    return found ? py::Step::Prune : py::Step::Descend;
  });
  return found;
}

}  // namespace kopt::profile
