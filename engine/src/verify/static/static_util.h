// Small tree helpers shared by the G1 checks (not checks themselves); walking the tree is
// artifact/pyparse/visit.h.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "artifact/literal.h"
#include "artifact/pyparse/ast.h"
#include "verify/static/static_check.h"

namespace kopt::verify {

// "line L:C" for a node of the candidate (1-based column, as compilers print it).
std::string at(const py::Node* n);

// Local name -> module path bound by the module's imports:
// `import triton.language as tl` -> {tl: triton.language}; `import triton` -> {triton: triton};
// `from torch._inductor.runtime.triton_helpers import math as tl_math` -> {tl_math: ...triton_helpers.math}.
using ImportMap = std::map<std::string, std::string, std::less<>>;
ImportMap import_map(const py::Node* module);

// Dotted name of a Name/Attribute chain with its first part resolved through the
// imports (`tl.store` -> `triton.language.store`); "" for anything else.
std::string qualified_name(const py::Node* n, const ImportMap& imports);

// Collects problems of one check and turns them into its Finding. Keeps the first
// few in full (each names its line:col) and counts the rest.
class Problems {
 public:
  void add(const py::Node* where, std::string what);
  void add(std::string what) { items_.push_back(std::move(what)); }
  bool empty() const { return items_.empty(); }
  Finding finding(std::string check, std::string ok_message) const;

 private:
  std::vector<std::string> items_;
};

}  // namespace kopt::verify
