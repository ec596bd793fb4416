#include "verify/static/pointer_roots.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "artifact/pyparse/visit.h"

namespace kopt::verify {

namespace {

// Attributes that describe a value rather than address memory (`Y.dtype.element_ty`).
const std::set<std::string, std::less<>> kMetadataAttrs = {"dtype", "type", "element_ty", "shape", "ndim", "numel"};

bool is_atomic(std::string_view name) { return name.starts_with("atomic_"); }

// Inductor runtime helpers that write through their first argument (scratch space for
// split scans, the semaphore of a grid barrier).
bool is_helper_writer(std::string_view q) {
  return q == "torch._inductor.runtime.triton_helpers.exclusive_scan_decoupled_lookback" ||
         q == "torch._inductor.runtime.triton_helpers.exclusive_scan_decoupled_lookback_64" ||
         q == "torch._inductor.runtime.triton_helpers.x_grid_barrier";
}

std::string_view last_part(std::string_view q) {
  size_t dot = q.rfind('.');
  return dot == std::string_view::npos ? q : q.substr(dot + 1);
}

const py::Node* keyword(const py::Node* call, std::string_view name) {
  for (const py::Node* k : call->list("keywords"))
    if (k->ident("arg") == name) return k->child("value");
  return nullptr;
}

const py::Node* arg_or_keyword(const py::Node* call, size_t i, std::string_view name) {
  if (const py::Node* k = keyword(call, name)) return k;
  const auto& args = call->list("args");
  return i < args.size() ? args[i] : nullptr;
}

}  // namespace

bool Roots::merge(const Roots& o) {
  size_t before = params.size();
  params.insert(o.params.begin(), o.params.end());
  bool grew = params.size() != before;
  if (unknown.empty() && !o.unknown.empty()) unknown = o.unknown, grew = true;
  return grew;
}

PointerRoots::PointerRoots(const py::Module& m, const std::string& entry, std::set<std::string> pointer_params)
    : m_(m), imports_(import_map(m.root())), entry_(entry), pointer_params_(std::move(pointer_params)) {
  for (const py::Node* st : m.root()->list("body")) {
    if (!st->is("FunctionDef")) continue;
    Fn f{st, {}, {}, {}};
    if (const py::Node* a = st->child("args")) {
      for (const char* list : {"posonlyargs", "args", "kwonlyargs"})
        for (const py::Node* p : a->list(list)) f.params.emplace_back(p->ident("arg"));
      for (const char* one : {"vararg", "kwarg"})
        if (const py::Node* p = a->child(one)) f.params.emplace_back(p->ident("arg"));
    }
    fns_.insert_or_assign(std::string(st->ident("name")), std::move(f));  // Python binds the last definition
  }
  for (auto& [name, f] : fns_) collect(f);
  solve();
}

const PointerRoots::Fn* PointerRoots::fn_of(const py::Node* def) const {
  if (!def) return nullptr;
  auto it = fns_.find(def->ident("name"));
  return it != fns_.end() && it->second.def == def ? &it->second : nullptr;
}

void PointerRoots::collect(Fn& f) {
  std::function<void(const py::Node*, const py::Node*)> bind = [&](const py::Node* target, const py::Node* value) {
    if (!target) return;
    if (target->is("Name")) {
      f.binds.emplace_back(target->ident("id"), value);
      f.table[std::string(target->ident("id"))];
    } else if (target->is("Starred")) {
      bind(target->child("value"), value);
    } else if (target->is("Tuple") || target->is("List")) {
      const auto& elts = target->list("elts");
      bool same = value && (value->is("Tuple") || value->is("List")) && value->list("elts").size() == elts.size();
      for (size_t i = 0; i < elts.size(); ++i) bind(elts[i], same ? value->list("elts")[i] : value);
    }
  };
  std::set<const py::Node*> called;  // func nodes of calls (visited before the func itself)
  for (const py::Node* st : f.def->list("body")) {
    py::walk(st, [&](const py::Node* n) {
      if (n->is("Assign")) {
        for (const py::Node* t : n->list("targets")) bind(t, n->child("value"));
      } else if (n->is("AugAssign") || n->is("AnnAssign") || n->is("NamedExpr")) {
        if (n->child("value")) bind(n->child("target"), n->child("value"));
      } else if (n->is("For") || n->is("comprehension")) {
        bind(n->child("target"), n->child("iter"));
      } else if (n->is("withitem")) {
        bind(n->child("optional_vars"), n->child("context_expr"));
      } else if (n->is("Call")) {
        const py::Node* func = n->child("func");
        called.insert(func);
        std::string q = qualified_name(func, imports_);
        std::string_view last = func->is("Attribute") ? func->ident("attr") : last_part(q);
        // A module function (tl.store, tl.atomic_add, ...) takes the pointer first; a
        // method (`desc.store(...)`, `bp.atomic_add(...)`) writes through its receiver.
        const bool module_fn = q.starts_with("triton.") || q.starts_with("torch.");
        Write w{n, f.def, nullptr, {}, ""};
        if (is_helper_writer(q)) {
          w.op = "triton_helpers." + std::string(last);
          w.pointer = arg_or_keyword(n, 0, last == "x_grid_barrier" ? "sem" : "scratch_base");
        } else if ((last == "store" || is_atomic(last)) && module_fn) {
          w.op = "tl." + std::string(last);
          w.pointer = arg_or_keyword(n, 0, "pointer");
        } else if ((last == "store" || is_atomic(last)) && func->is("Attribute")) {
          w.op = "." + std::string(last);
          w.pointer = func->child("value");
        } else if (last == "inline_asm_elementwise") {
          asm_.push_back(n);
        }
        if (func->is("Name") && fns_.count(func->ident("id")))
          call_sites_[std::string(func->ident("id"))].emplace_back(f.def, n);
        if (!w.op.empty()) {
          for (const py::Node* a : n->list("args"))
            if (a != w.pointer) w.values.push_back(a);
          for (const py::Node* k : n->list("keywords"))
            if (k->child("value") != w.pointer) w.values.push_back(k->child("value"));
          writes_.push_back(std::move(w));
        }
      } else if (n->is("Compare")) {
        compares_.emplace_back(f.def, n);
      } else if ((n->is("Name") || n->is("Attribute")) && !called.count(n)) {
        std::string q = qualified_name(n, imports_);
        std::string_view last = n->is("Attribute") ? n->ident("attr") : last_part(q);
        bool writer = is_helper_writer(q) || ((q.starts_with("triton.language.") || n->is("Attribute")) &&
                                              (last == "store" || is_atomic(last)));
        if (writer) hidden_.push_back(n);
        if (n->is("Name") && fns_.count(n->ident("id"))) helpers_as_values_.insert(std::string(n->ident("id")));
      }
    });
  }
  // Parameters are locals even when never assigned.
  for (const std::string& p : f.params) f.table[p];
}

Roots PointerRoots::param_roots(const Fn& helper, size_t index) const {
  Roots r;
  std::string name(helper.def->ident("name"));
  const std::string& param = helper.params[index];
  if (helpers_as_values_.count(name)) {
    r.unknown = fmt::format("helper `{}` is passed as a value, so what its parameter `{}` points to is unknown",
                            name, param);
    return r;
  }
  const py::Node* a = helper.def->child("args");
  if ((a->child("vararg") && a->child("vararg")->ident("arg") == param) ||
      (a->child("kwarg") && a->child("kwarg")->ident("arg") == param)) {
    r.unknown = fmt::format("`{}` of helper `{}` is a * or ** parameter", param, name);
    return r;
  }
  auto sites = call_sites_.find(name);
  if (sites == call_sites_.end()) return r;
  for (const auto& [caller, call] : sites->second) {
    for (const py::Node* x : call->list("args"))
      if (x->is("Starred")) r.unknown = fmt::format("a call of helper `{}` passes *args", name);
    r.merge(roots(caller, arg_or_keyword(call, index, param)));
  }
  return r;
}

void PointerRoots::solve() {
  // Monotone fixpoint: table entries only grow, over finitely many roots. Assignments
  // are visited in program order, so straight-line code settles in one round and each
  // loop adds about one more; a source that does not settle is not traced at all.
  constexpr int kMaxRounds = 64;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    for (auto& [fname, f] : fns_) {
      for (size_t i = 0; i < f.params.size(); ++i) {
        Roots r;
        if (fname != entry_) r = param_roots(f, i);
        else if (pointer_params_.count(f.params[i])) r.params.insert(f.params[i]);
        changed |= f.table[f.params[i]].merge(r);
      }
      for (const auto& [name, value] : f.binds) changed |= f.table[name].merge(roots(f.def, value));
    }
    if (!changed) return;
  }
  gave_up_ = fmt::format("the source's assignments did not settle in {} rounds of the analysis", kMaxRounds);
}

Roots PointerRoots::roots(const py::Node* function, const py::Node* e) const {
  Roots r;
  if (!gave_up_.empty()) {
    r.unknown = gave_up_;
    return r;
  }
  if (!e || e->is("Constant")) return r;
  if (e->is("Name")) {
    if (const Fn* f = fn_of(function))
      if (auto it = f->table.find(e->ident("id")); it != f->table.end()) return it->second;
    return r;  // a global: a module constant, an import, a function
  }
  if (e->is("Attribute")) return kMetadataAttrs.count(e->ident("attr")) ? r : roots(function, e->child("value"));
  if (e->is("Lambda")) {
    r.unknown = fmt::format("a lambda at {}", at(e));
    return r;
  }
  if (e->is("Call")) {
    const py::Node* func = e->child("func");
    bool helper = func->is("Name") && fns_.count(func->ident("id"));
    if (!helper) {
      std::string q = qualified_name(func, imports_);
      std::string_view last = func->is("Attribute") ? func->ident("attr") : last_part(q);
      if (last == "make_block_ptr" || last == "make_tensor_descriptor" ||
          last == "_experimental_make_tensor_descriptor")
        return roots(function, arg_or_keyword(e, 0, "base"));
      // Loads and atomics return data, not addresses.
      if (last == "load" || last.ends_with("_load") || last == "store" || is_atomic(last) || is_helper_writer(q))
        return r;
      r.merge(roots(function, func));
    }
    for (const py::Node* a : e->list("args")) r.merge(roots(function, a));
    for (const py::Node* k : e->list("keywords")) r.merge(roots(function, k->child("value")));
    return r;
  }
  py::for_each_child(e, [&](const py::Node* c) { r.merge(roots(function, c)); });
  return r;
}

}  // namespace kopt::verify
