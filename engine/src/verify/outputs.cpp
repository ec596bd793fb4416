#include "verify/outputs.h"

#include <set>

#include "artifact/literal.h"

namespace kopt::verify {

namespace {

// Every Name inside `n` (the pointer expression of a load or store).
void names_in(const py::Node* n, std::set<std::string>& out) {
  if (!n) return;
  if (n->is("Name")) out.insert(std::string(n->ident("id")));
  for (const auto& f : n->fields) {
    if (f.kind == py::Field::Kind::Child) names_in(f.child, out);
    if (f.kind == py::Field::Kind::List)
      for (const py::Node* c : f.list) names_in(c, out);
  }
}

void scan(const py::Node* n, std::set<std::string>& stored, std::set<std::string>& loaded) {
  if (!n) return;
  if (n->is("Call")) {
    std::string fn = ir::dotted_name(n->child("func"));
    const auto& args = n->list("args");
    if (!args.empty()) {
      if (fn == "tl.store" || fn.rfind("tl.atomic_", 0) == 0) names_in(args[0], stored);
      if (fn == "tl.load" || fn.rfind("tl.atomic_", 0) == 0) names_in(args[0], loaded);
    }
  }
  for (const auto& f : n->fields) {
    if (f.kind == py::Field::Kind::Child) scan(f.child, stored, loaded);
    if (f.kind == py::Field::Kind::List)
      for (const py::Node* c : f.list) scan(c, stored, loaded);
  }
}

}  // namespace

std::vector<size_t> pure_output_args(const ir::Kernel& k) {
  ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
  std::set<std::string> stored, loaded;
  for (const py::Node* f : ks.jit_functions) scan(f, stored, loaded);
  std::vector<size_t> out;
  size_t runtime = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) continue;
    bool pointer = !p.dtype.empty() && p.dtype[0] == '*';
    if (pointer && stored.count(p.name) && !loaded.count(p.name)) out.push_back(runtime);
    ++runtime;
  }
  return out;
}

}  // namespace kopt::verify
