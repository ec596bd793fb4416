// Building the IR of one module: find the kernel declarations at module level,
// then the host functions, then bind each launch's arguments to the kernel's
// signature. Anything that does not look like Inductor output is a UserError.
#include "artifact/ir.h"

#include <fstream>
#include <sstream>

#include "artifact/ir_internal.h"
#include "artifact/literal.h"
#include "util/error.h"

namespace kopt::ir {

namespace {

const py::Node* async_compile_triton(const py::Node* st) {
  if (!st->is("Assign") || st->list("targets").size() != 1 || !st->list("targets")[0]->is("Name")) return nullptr;
  const py::Node* v = st->child("value");
  if (!v || !v->is("Call") || dotted_name(v->child("func")) != "async_compile.triton") return nullptr;
  return v;
}

// Pairs positional launch arguments with the entry's runtime (non-constexpr)
// parameters; the rest are extra (templates pass grid sizes after them).
void bind_launch(Launch& l, const Kernel& k) {
  std::vector<const KernelParam*> runtime;
  for (const KernelParam& p : k.signature)
    if (!p.is_constexpr) runtime.push_back(&p);
  size_t next = 0;
  for (const Arg& a : l.args) {
    if (!a.keyword.empty()) {
      l.bound.emplace_back(a.keyword, a.text);
    } else if (next < runtime.size()) {
      l.bound.emplace_back(runtime[next++]->name, a.text);
    } else {
      l.extra.push_back(a);
    }
  }
}

}  // namespace

std::unique_ptr<Artifact> build(std::string source, std::string path) {
  auto art = std::make_unique<Artifact>();
  art->path = path;
  try {
    art->module = py::parse(std::move(source), path);
  } catch (const py::ParseError& e) {
    throw located_error(e.file, e.line, e.col, e.message);
  }
  const py::Module& m = *art->module;

  std::map<std::string, size_t, std::less<>> kernel_by_var;
  std::vector<std::pair<const py::Node*, std::string>> host_defs;
  bool runner_call_alias = false, has_async_compile = false;
  for (const py::Node* st : m.root()->list("body")) {
    if (const py::Node* call = async_compile_triton(st)) {
      Kernel k = read_kernel_decl(m, st, call);
      kernel_by_var[k.var] = art->kernels.size();
      art->kernels.push_back(std::move(k));
      continue;
    }
    if (st->is("Assign") && dotted_name(st->child("value")) == "AsyncCompile") has_async_compile = true;
    if (st->is("Assign") && st->child("value")->is("Call") &&
        dotted_name(st->child("value")->child("func")) == "AsyncCompile")
      has_async_compile = true;
    if (st->is("FunctionDef")) {
      std::string_view name = st->ident("name");
      if (name == "call" || name.rfind("partition_", 0) == 0) host_defs.emplace_back(st, std::string(name));
    }
    if (st->is("ClassDef") && st->ident("name") == "Runner") {
      for (const py::Node* member : st->list("body"))
        if (member->is("FunctionDef") &&
            (member->ident("name") == "call" || member->ident("name").rfind("partition_", 0) == 0))
          host_defs.emplace_back(member, "Runner." + std::string(member->ident("name")));
    }
    if (st->is("Assign") && dotted_name(st->child("value")) == "runner.call") runner_call_alias = true;
  }
  if (host_defs.empty() || (!has_async_compile && art->kernels.empty())) {
    throw located_error(path, 1, 0,
                        "not an Inductor output module: expected `async_compile = AsyncCompile()` and a "
                        "`call(args)` function or `Runner.call`; pass the module torch.compile wrote (see "
                        "`kernelopt capture`)");
  }
  for (auto& [def, name] : host_defs) {
    Function f = read_host_function(m, def, name, kernel_by_var);
    for (Launch& l : f.launches) {
      bind_launch(l, art->kernels[l.kernel]);
      art->kernels[l.kernel].launch_count++;
    }
    art->functions.push_back(std::move(f));
  }
  art->entry = runner_call_alias ? "Runner.call" : "call";
  if (!art->entry_function()) art->entry = art->functions.front().name;
  return art;
}

std::unique_ptr<Artifact> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open file; check the path", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return build(ss.str(), path);
}

const Kernel* Artifact::find_kernel(std::string_view name_or_var) const {
  for (const Kernel& k : kernels)
    if (k.name == name_or_var || k.var == name_or_var) return &k;
  return nullptr;
}

const Function* Artifact::entry_function() const {
  for (const Function& f : functions)
    if (f.name == entry) return &f;
  return nullptr;
}

}  // namespace kopt::ir
