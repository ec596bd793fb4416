// Check 5, imports: a kernel source may import only Triton and Inductor's runtime
// helpers, which is all Inductor itself imports. Anything else (os, sys, subprocess,
// torch, numpy, ctypes, importlib, builtins, ...) gives host code a way out of the
// sandbox at import time. The names taken from Inductor's runtime modules are
// allow-listed one by one because those modules themselves import os and torch, so
// `from ...triton_heuristics import os` would otherwise bring them in.
// (Imports inside functions are host_code's business.)
#include <fmt/format.h>

#include <map>
#include <set>

#include "verify/static/static_util.h"

namespace kopt::verify {

namespace {

using Names = std::set<std::string, std::less<>>;

// `import M` / `import M as x`: the modules allowed, and whether they need an alias
// (`import torch._inductor.runtime.hints` would bind `torch` itself).
const std::map<std::string, bool, std::less<>> kImportModules = {
    {"triton", false},
    {"triton.language", false},
    {"math", false},
    {"torch._inductor.runtime.triton_helpers", true},
    {"torch._inductor.runtime.triton_heuristics", true},
    {"torch._inductor.runtime.hints", true},
    {"torch._inductor.runtime.triton_compat", true},
};

// `from M import a, b as c`: the names allowed from each module ("" = any public name).
const std::map<std::string, Names, std::less<>> kFromModules = {
    {"triton", {"language", "jit", "cdiv", "next_power_of_2"}},
    {"triton.language", {""}},
    {"triton.language.extra", {"libdevice"}},
    {"triton.language.extra.cuda", {"libdevice"}},
    {"torch._inductor.runtime", {"triton_helpers", "triton_heuristics", "hints", "triton_compat"}},
    {"torch._inductor.runtime.triton_helpers", {"libdevice", "math"}},
    {"torch._inductor.runtime.hints",
     {"AutotuneHint", "ReductionHint", "TileHint", "DeviceProperties", "TRITON_MAX_BLOCK"}},
    {"torch._inductor.runtime.triton_compat", {"libdevice", "math", "tl", "triton"}},
    {"torch._inductor.runtime.triton_heuristics", {}},
};

const char* kAllowed =
    "allowed: import triton, import triton.language as tl, import math, "
    "from torch._inductor.runtime import triton_helpers, triton_heuristics, hints, triton_compat, "
    "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math, "
    "from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties";

void check_import(const py::Node* st, Problems& p) {
  for (const py::Node* a : st->list("names")) {
    std::string name(a->ident("name"));
    auto it = kImportModules.find(name);
    if (it == kImportModules.end())
      p.add(st, fmt::format("`import {}` is not allowed ({})", name, kAllowed));
    else if (it->second && a->ident("asname").empty())
      p.add(st, fmt::format("`import {}` binds `torch`; use `from {} import {}`", name,
                            name.substr(0, name.rfind('.')), name.substr(name.rfind('.') + 1)));
  }
}

void check_import_from(const py::Node* st, Problems& p) {
  std::string mod(st->ident("module"));
  if (const py::Field* level = st->field("level"); level && level->integer > 0) {
    p.add(st, fmt::format("relative import `from {}{} import ...` is not allowed ({})",
                          std::string(level->integer, '.'), mod, kAllowed));
    return;
  }
  auto it = kFromModules.find(mod);
  if (it == kFromModules.end()) {
    p.add(st, fmt::format("`from {} import ...` is not allowed ({})", mod, kAllowed));
    return;
  }
  for (const py::Node* a : st->list("names")) {
    std::string name(a->ident("name"));
    bool any = it->second.count("") && name != "*" && !name.starts_with("_");
    if (!any && !it->second.count(name))
      p.add(a->begin.line ? a : st, fmt::format("`from {} import {}` is not allowed ({})", mod, name, kAllowed));
  }
}

}  // namespace

Finding check_imports(const StaticInput& in) {
  Problems p;
  for (const py::Node* st : in.candidate.module->root()->list("body")) {
    if (st->is("Import")) check_import(st, p);
    else if (st->is("ImportFrom")) check_import_from(st, p);
  }
  return p.finding("imports", "imports only triton, triton.language, math and Inductor's runtime helpers");
}

}  // namespace kopt::verify
