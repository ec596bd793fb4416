// Check 2, entry: the candidate defines exactly one @triton.jit function named like
// the original's entry (the launch site calls it by that name), any number of other
// @triton.jit helpers, and no other functions or classes. A second definition of the
// entry would silently replace the first at import, and a plain `def` or a class is
// host code, which a kernel source never needs.
#include <fmt/format.h>

#include <map>

#include "verify/static/static_util.h"

namespace kopt::verify {

namespace {

bool is_jit_decorator(const py::Node* d, const ImportMap& imports) {
  return qualified_name(d->is("Call") ? d->child("func") : d, imports) == "triton.jit";
}

}  // namespace

Finding check_entry(const StaticInput& in) {
  const py::Node* module = in.candidate.module->root();
  const ImportMap imports = import_map(module);
  const std::string& entry = in.original.entry;
  Problems p;
  std::map<std::string, const py::Node*, std::less<>> seen;
  int entries = 0;
  for (const py::Node* st : module->list("body")) {
    if (st->is("ClassDef")) {
      p.add(st, fmt::format("class `{}`: a kernel source defines only @triton.jit functions", st->ident("name")));
      continue;
    }
    if (st->is("AsyncFunctionDef")) {
      p.add(st, fmt::format("async function `{}`: only @triton.jit functions are allowed", st->ident("name")));
      continue;
    }
    if (!st->is("FunctionDef")) continue;
    std::string name(st->ident("name"));
    bool jit = false;
    for (const py::Node* d : st->list("decorator_list")) jit = jit || is_jit_decorator(d, imports);
    if (!jit) {
      p.add(st, fmt::format("function `{}` is not @triton.jit: only @triton.jit functions are allowed", name));
      continue;
    }
    if (auto it = seen.find(name); it != seen.end()) {
      p.add(st, fmt::format("@triton.jit function `{}` is defined again (first at {}); the later one would "
                            "silently replace it",
                            name, at(it->second)));
    } else {
      seen[name] = st;
    }
    if (name == entry) ++entries;
  }
  if (entries == 0)
    p.add(fmt::format("line 1:1: no @triton.jit function named `{}` (the original's entry, which the launch site "
                      "calls)",
                      entry));
  return p.finding("entry", fmt::format("one @triton.jit entry `{}`, {} helper(s), nothing else", entry,
                                        seen.size() - (entries ? 1 : 0)));
}

}  // namespace kopt::verify
