#include "verify/outputs.h"

#include <algorithm>
#include <regex>
#include <set>

#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::verify {

namespace {

// Every Name inside `n` (the pointer expression of a load or store).
void names_in(const py::Node* n, std::set<std::string>& out) {
  py::walk(n, [&](const py::Node* m) {
    if (m->is("Name")) out.insert(std::string(m->ident("id")));
  });
}

void scan(const py::Node* n, std::set<std::string>& stored, std::set<std::string>& loaded) {
  py::walk(n, [&](const py::Node* m) {
    if (!m->is("Call")) return;
    std::string fn = ir::dotted_name(m->child("func"));
    const auto& args = m->list("args");
    if (args.empty()) return;
    if (fn == "tl.store" || fn.rfind("tl.atomic_", 0) == 0) names_in(args[0], stored);
    if (fn == "tl.load" || fn.rfind("tl.atomic_", 0) == 0) names_in(args[0], loaded);
  });
}

}  // namespace

PointerWrites pointer_writes(const ir::Kernel& k) {
  ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
  std::set<std::string> stored, loaded;
  for (const py::Node* f : ks.jit_functions) scan(f, stored, loaded);
  PointerWrites out;
  size_t runtime = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) continue;
    bool pointer = !p.dtype.empty() && p.dtype[0] == '*';
    if (pointer && stored.count(p.name)) {
      out.stored.push_back(runtime);
      if (!loaded.count(p.name)) out.pure.push_back(runtime);
    }
    ++runtime;
  }
  return out;
}

std::vector<size_t> pure_output_args(const ir::Kernel& k) { return pointer_writes(k).pure; }

namespace {

bool mentions(const std::string& text, const std::string& name) {
  return std::regex_search(text, std::regex("(^|[^\\w.])" + name + "($|[^\\w])"));
}

// Whether `name` is used in `f` only by its allocation, `name.zero_()`, launches of `kernel`
// (at runtime argument `index`) and its free.
bool only_scratch_uses(const ir::Artifact& a, const ir::Function& f, const std::string& name, const std::string& kernel,
                       size_t index) {
  bool allocated = false, freed = false;
  for (const ir::Step& st : f.steps) {
    switch (st.kind) {
      case ir::Step::Kind::Alloc:
        allocated = allocated || f.allocs[st.index].buffer == name;
        break;
      case ir::Step::Kind::Del:
        freed = freed || std::count(st.names.begin(), st.names.end(), name) > 0;
        break;
      case ir::Step::Kind::Launch: {
        const ir::Launch& l = f.launches[st.index];
        for (size_t i = 0; i < l.args.size(); ++i)
          if (mentions(l.args[i].text, name) && (a.kernels[l.kernel].name != kernel || i != index)) return false;
        for (const ir::Arg& e : l.extra)
          if (mentions(e.text, name)) return false;
        break;
      }
      case ir::Step::Kind::Extern:
        for (const ir::Arg& e : f.externs[st.index].args)
          if (mentions(e.text, name)) return false;
        if (mentions(f.externs[st.index].out, name)) return false;
        break;
      case ir::Step::Kind::View:
        if (f.views[st.index].base == name || f.views[st.index].buffer == name) return false;
        break;
      case ir::Step::Kind::Alias:
      case ir::Step::Kind::Partition:
        for (const std::string& n : st.names)
          if (n == name) return false;
        if (mentions(st.text, name)) return false;
        break;
      case ir::Step::Kind::Other:
        if (mentions(st.text, name) && st.text != name + ".zero_()") return false;
        break;
    }
  }
  for (const std::string& r : f.returns)
    if (mentions(r, name)) return false;
  return allocated && freed;
}

}  // namespace

std::vector<size_t> scratch_args(const ir::Artifact& a, const ir::Kernel& k) {
  std::vector<std::string> runtime;
  for (const ir::KernelParam& p : k.signature)
    if (!p.is_constexpr) runtime.push_back(p.name);
  std::vector<size_t> out;
  for (size_t i = 0; i < runtime.size(); ++i) {
    if (std::find(k.mutated_args.begin(), k.mutated_args.end(), runtime[i]) == k.mutated_args.end()) continue;
    bool launched = false, scratch = true;
    for (const ir::Function& f : a.functions) {
      for (const ir::Launch& l : f.launches) {
        if (a.kernels[l.kernel].name != k.name) continue;
        launched = true;
        if (i >= l.args.size() || l.args[i].kind != ir::Arg::Kind::Name || !l.args[i].keyword.empty() ||
            !only_scratch_uses(a, f, l.args[i].text, k.name, i))
          scratch = false;
      }
    }
    if (launched && scratch) out.push_back(i);
  }
  return out;
}

}  // namespace kopt::verify
