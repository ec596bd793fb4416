// Which kernel parameters a pointer expression is derived from — the analysis behind
// the `stores` check. Flow-insensitive and conservative: a local's roots are the union
// over all its assignments, arithmetic unions its operands, calls union their
// arguments (a helper may return a pointer it was given), except calls that return
// loaded data (tl.load, atomics) and metadata (`x.dtype`), which root nowhere.
// A @triton.jit helper's parameter takes the roots of the arguments at its call sites;
// a helper passed as a value (a combine function) has untraceable parameters.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "artifact/pyparse/ast.h"
#include "verify/static/static_util.h"

namespace kopt::verify {

struct Roots {
  std::set<std::string> params;  // entry parameters the expression's address comes from
  std::string unknown;           // non-empty: why the roots cannot be determined
  bool merge(const Roots& o);    // true when this grew
};

// One write to memory: tl.store, tl.atomic_*, `.store` on a descriptor, and the
// triton_helpers functions that write through their first argument.
struct Write {
  const py::Node* call;
  const py::Node* function;             // the FunctionDef it is in
  const py::Node* pointer;              // the pointer expression (nullptr: missing)
  std::vector<const py::Node*> values;  // every other argument (must not carry pointers)
  std::string op;                       // as shown in messages: "tl.store", ".store", ...
};

class PointerRoots {
 public:
  // `pointer_params`: the entry's parameters that are pointers (typed `*...`).
  PointerRoots(const py::Module& m, const std::string& entry, std::set<std::string> pointer_params);

  Roots roots(const py::Node* function, const py::Node* expr) const;
  const std::vector<Write>& writes() const { return writes_; }
  // Store/atomic functions referenced other than by calling them (`s = tl.store`),
  // which would hide a write from this analysis.
  const std::vector<const py::Node*>& hidden_writers() const { return hidden_; }
  // tl.inline_asm_elementwise calls: raw PTX can write anywhere.
  const std::vector<const py::Node*>& inline_asm() const { return asm_; }
  // Every comparison, with its function: comparing addresses would let one buffer's
  // address flow into another's offsets through control flow.
  const std::vector<std::pair<const py::Node*, const py::Node*>>& compares() const { return compares_; }

 private:
  struct Fn {
    const py::Node* def;
    std::vector<std::string> params;
    std::vector<std::pair<std::string, const py::Node*>> binds;  // (name, assigned value) in program order
    std::map<std::string, Roots, std::less<>> table;             // name -> roots so far (every local has one)
  };
  void collect(Fn& f);
  void solve();
  Roots param_roots(const Fn& helper, size_t index) const;
  const Fn* fn_of(const py::Node* def) const;

  const py::Module& m_;
  ImportMap imports_;
  std::string entry_;
  std::set<std::string> pointer_params_;
  std::map<std::string, Fn, std::less<>> fns_;
  std::vector<Write> writes_;
  std::vector<const py::Node*> hidden_, asm_;
  std::vector<std::pair<const py::Node*, const py::Node*>> compares_;  // (function, Compare)
  std::set<std::string> helpers_as_values_;
  std::map<std::string, std::vector<std::pair<const py::Node*, const py::Node*>>, std::less<>> call_sites_;
  std::string gave_up_;  // non-empty when the fixpoint did not converge: everything is unknown
};

}  // namespace kopt::verify
