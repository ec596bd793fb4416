// Check 6, host_code: nothing in the candidate may run on the host beyond what
// Inductor's own kernel sources do. Two places run as Python: the module body and
// its decorators/annotations/defaults run at import, and in CPU mode Triton's
// interpreter runs the kernel bodies themselves. So:
//  - module level: only imports, the @triton.jit definitions, the one call
//    `triton_helpers.set_driver_to_gpu()` (`set_driver_to_cpu()` in kernels Inductor wrote for CPU
//    tensors), and `NAME = literal` /
//    `NAME: tl.constexpr = literal` constants;
//  - decorator arguments, annotations and defaults: literals, names, attributes and
//    the metadata constructors Inductor writes (DeviceProperties(...), set(), ...);
//  - anywhere: no exec/eval/open/getattr-style builtins, no os/sys/subprocess/torch/
//    time/random/socket/ctypes/builtins (not even reached as an attribute of an
//    allowed module), no dunder attributes (`__globals__`, `__class__`, ...), no
//    Triton host APIs (triton.runtime, ...), no clock/timer reads, no printing
//    (device_print output would corrupt the worker's stdout protocol), no
//    global/nonlocal, no imports, lambdas, classes, nested functions, async or
//    generators inside functions.
#include <fmt/format.h>

#include <map>
#include <set>

#include "artifact/pyparse/visit.h"
#include "verify/static/static_util.h"

namespace kopt::verify {

namespace {

using Names = std::set<std::string, std::less<>>;

// Builtins that reach the interpreter, the file system or the caller's frames.
const Names kForbiddenBuiltins = {"exec",   "eval",  "compile",    "open",  "__import__", "globals", "locals",
                                  "vars",   "getattr", "setattr",  "delattr", "hasattr", "input",   "print",
                                  "breakpoint", "exit", "quit",   "help",  "dir",        "type",    "super",
                                  "object", "memoryview"};
// Modules (or their usual aliases) that are host code by definition.
const Names kForbiddenModules = {"os",        "sys",      "subprocess", "torch",    "time",     "random",
                                 "socket",    "ctypes",   "builtins",   "importlib", "shutil",  "pathlib",
                                 "pickle",    "marshal",  "threading",  "multiprocessing", "inspect", "numpy",
                                 "np",        "tempfile", "urllib",     "requests", "asyncio",  "runpy"};
// Attribute names never needed on the device side, with the reason shown.
const std::map<std::string, std::string, std::less<>> kForbiddenAttrs = {
    {"exec", "host code"}, {"eval", "host code"}, {"compile", "host code"}, {"open", "host code"},
    {"system", "host code"}, {"popen", "host code"}, {"getattr", "host code"}, {"setattr", "host code"},
    {"globals", "host code"}, {"locals", "host code"}, {"vars", "host code"}, {"breakpoint", "host code"},
    {"input", "host code"},
    {"device_print", "printing would corrupt the worker's stdout protocol"},
    {"static_print", "printing would corrupt the worker's stdout protocol"},
    {"globaltimer", "a clock read makes results depend on timing"},
    {"clock", "a clock read makes results depend on timing"},
    {"clock64", "a clock read makes results depend on timing"}};
// `triton.<x>` allowed anywhere; the rest (runtime, compiler, knobs, testing, ...) is host API.
const Names kTritonAttrs = {"jit", "language", "cdiv", "next_power_of_2", "Config", "constexpr"};
// Calls allowed in host-evaluated expressions (decorators, annotations, defaults, module constants).
const Names kMetadataCalls = {"torch._inductor.runtime.hints.DeviceProperties", "set", "frozenset", "dict", "tuple",
                              "list", "float", "int", "triton.Config", "triton.language.constexpr", "triton.jit"};
// Node types that may appear in host-evaluated expressions (operators are fields, not
// nodes). No BinOp: `10**10**10` in a decorator would hang the worker at import.
const Names kLiteralNodes = {"Constant", "Name", "Attribute", "Dict", "List", "Tuple", "Set", "UnaryOp", "keyword",
                             "Call"};
// Statements and expressions a kernel body never needs.
const Names kForbiddenNodes = {"Global", "Nonlocal", "Import", "ImportFrom", "Lambda", "ClassDef", "FunctionDef",
                               "AsyncFunctionDef", "Await", "Yield", "YieldFrom", "AsyncFor", "AsyncWith"};

bool is_dunder(std::string_view s) { return s.size() > 4 && s.starts_with("__") && s.ends_with("__"); }

// The driver switch Inductor's kernel sources call once at import (GPU, or CPU tensors).
bool is_set_driver(const std::string& q) {
  return q == "torch._inductor.runtime.triton_helpers.set_driver_to_gpu" ||
         q == "torch._inductor.runtime.triton_helpers.set_driver_to_cpu";
}

struct HostCheck {
  const py::Module& m;
  const ImportMap& imports;
  Problems& p;

  // Rules that hold anywhere in the source.
  void anywhere(const py::Node* n) {
    if (n->is("Name")) {
      std::string_view id = n->ident("id");
      if (kForbiddenBuiltins.count(id)) p.add(n, fmt::format("`{}` is host code and not allowed in a kernel", id));
      else if (kForbiddenModules.count(id)) p.add(n, fmt::format("`{}` is host code and not allowed in a kernel", id));
      else if (is_dunder(id) && id != "__file__")  // Inductor writes `filename=__file__`
        p.add(n, fmt::format("`{}` is not allowed (dunder names reach the interpreter)", id));
    } else if (n->is("Attribute")) {
      std::string_view attr = n->ident("attr");
      if (is_dunder(attr))
        p.add(n, fmt::format("attribute `{}` is not allowed (dunder attributes reach the interpreter)", attr));
      else if (kForbiddenModules.count(attr))
        p.add(n, fmt::format("attribute `.{}` is not allowed: it reaches a host module", attr));
      else if (auto it = kForbiddenAttrs.find(attr); it != kForbiddenAttrs.end())
        p.add(n, fmt::format("attribute `.{}` is not allowed: {}", attr, it->second));
      std::string q = qualified_name(n, imports);
      if (q.starts_with("triton.") && n->child("value") && qualified_name(n->child("value"), imports) == "triton" &&
          !kTritonAttrs.count(attr))
        p.add(n, fmt::format("`triton.{}` is a host API; a kernel may use triton.jit, triton.language, triton.cdiv, "
                             "triton.next_power_of_2",
                             attr));
    }
  }

  // Inside a function body: no constructs that only make sense on the host.
  void in_function(const py::Node* body_stmt) {
    py::walk(body_stmt, [&](const py::Node* n) {
      anywhere(n);
      if (kForbiddenNodes.count(n->type))
        p.add(n, fmt::format("`{}` is not allowed inside a kernel function", n->type));
      std::string q = n->is("Name") || n->is("Attribute") ? qualified_name(n, imports) : "";
      if (q.starts_with("torch._inductor.runtime.triton_heuristics"))
        p.add(n, "triton_heuristics is the host-side autotuner; use it only as the entry's decorator");
      if (is_set_driver(q)) p.add(n, "set_driver_to_gpu() / set_driver_to_cpu() belongs at module level, once");
    });
  }

  // Decorators, annotations, defaults, module-level constants: evaluated at import.
  void host_expression(const py::Node* e, std::string_view what) {
    py::visit(e, [&](const py::Node* n, const py::Node*) {
      anywhere(n);
      if (!kLiteralNodes.count(n->type)) {
        p.add(n, fmt::format("{} runs at import and may hold only literals and metadata constructors, not `{}`",
                             what, n->type));
        return py::Step::Prune;
      }
      if (n->is("Call")) {
        std::string q = qualified_name(n->child("func"), imports);
        bool ok = kMetadataCalls.count(q) || q.starts_with("torch._inductor.runtime.triton_heuristics.");
        if (!ok)
          p.add(n, fmt::format("{} runs at import; call of `{}` is not allowed there (only DeviceProperties(...), "
                               "set(), triton.Config(...), tl.constexpr(...))",
                               what, q.empty() ? std::string(m.text(n->child("func"))) : q));
      }
      return py::Step::Descend;
    });
  }

  void function(const py::Node* fn) {
    for (const py::Node* d : fn->list("decorator_list")) host_expression(d, "a decorator");
    if (const py::Node* a = fn->child("args")) {
      py::visit(a, [&](const py::Node* n, const py::Node*) {
        if (n->is("arg")) {
          if (const py::Node* ann = n->child("annotation")) host_expression(ann, "an annotation");
          return py::Step::Prune;
        }
        if (n != a) {
          host_expression(n, "a default value");
          return py::Step::Prune;
        }
        return py::Step::Descend;
      });
    }
    if (const py::Node* r = fn->child("returns")) host_expression(r, "a return annotation");
    for (const py::Node* st : fn->list("body")) in_function(st);
  }

  bool is_literal(const py::Node* v) {
    if (!v) return false;
    if (v->is("Constant")) return true;
    if (v->is("UnaryOp")) return is_literal(v->child("operand"));
    if (v->is("Tuple")) {
      for (const py::Node* e : v->list("elts"))
        if (!is_literal(e)) return false;
      return true;
    }
    if (v->is("Call") && qualified_name(v->child("func"), imports) == "triton.language.constexpr")
      return v->list("args").size() == 1 && v->list("keywords").empty() && is_literal(v->list("args")[0]);
    return false;
  }

  void module_statement(const py::Node* st) {
    if (st->is("Import") || st->is("ImportFrom")) return;            // judged by `imports`
    if (st->is("ClassDef") || st->is("AsyncFunctionDef")) return;    // judged by `entry`
    if (st->is("FunctionDef")) return function(st);
    if (st->is("Expr")) {
      const py::Node* v = st->child("value");
      if (v->is("Constant") && v->const_kind == py::ConstKind::Str) return;  // a docstring
      if (v->is("Call") && v->list("args").empty() && v->list("keywords").empty() &&
          is_set_driver(qualified_name(v->child("func"), imports)))
        return;
    }
    const auto& targets = st->list("targets");
    const py::Node* target = st->is("Assign") && targets.size() == 1 ? targets[0]
                             : st->is("AnnAssign")                   ? st->child("target")
                                                                     : nullptr;
    if (target && target->is("Name") && !is_dunder(target->ident("id")) && is_literal(st->child("value"))) {
      anywhere(target);
      if (const py::Node* ann = st->child("annotation")) host_expression(ann, "an annotation");
      return;
    }
    p.add(st, fmt::format("module-level `{}` runs on the host at import; allowed there: imports, @triton.jit "
                          "functions, triton_helpers.set_driver_to_gpu() (or _cpu()), NAME = literal, "
                          "NAME: tl.constexpr = literal",
                          st->type));
    py::walk(st, [&](const py::Node* n) { anywhere(n); });
  }
};

}  // namespace

Finding check_host_code(const StaticInput& in) {
  const py::Node* module = in.candidate.module->root();
  const ImportMap imports = import_map(module);
  Problems p;
  HostCheck h{*in.candidate.module, imports, p};
  for (const py::Node* st : module->list("body")) h.module_statement(st);
  return p.finding("host_code", "no host-side code: module level, decorators and kernel bodies are clean");
}

}  // namespace kopt::verify
