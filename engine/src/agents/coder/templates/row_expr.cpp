#include "agents/coder/templates/row_expr.h"

#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "artifact/literal.h"

namespace kopt::agents::templates {

namespace {

// Thrown inside the reader; read_row_kernel turns it into the reason.
struct Refuse : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A value while reading: an affine index, a mask, something only the schedule uses
// (offsets, block sizes), an expression, or a tuple of those.
struct Val {
  enum Kind { Idx, Mask, Opaque, Expr, Tuple } kind = Opaque;
  int64_t r = 0, x = 0, c = 0;  // Idx
  std::optional<int64_t> integer;  // an int literal, usable in index arithmetic
  RowExprP e;
  std::vector<Val> items;
  bool stale = false;  // a per-block value of a finished loop: only its last block's, so unusable
};

Val expr(RowExprP e) { return Val{Val::Expr, 0, 0, 0, std::nullopt, std::move(e), {}, false}; }
Val kind(Val::Kind k) { return Val{k, 0, 0, 0, std::nullopt, nullptr, {}, false}; }
Val idx(int64_t r, int64_t x, int64_t c) { return Val{Val::Idx, r, x, c, std::nullopt, nullptr, {}, false}; }

RowExprP make(std::string op, std::vector<RowExprP> args, std::string text = "") {
  auto e = std::make_shared<RowExpr>();
  e->op = std::move(op);
  e->args = std::move(args);
  e->text = std::move(text);
  bool reduction = e->op == "sum" || e->op == "wmean" || e->op == "wm2" || e->op == "wcount";
  for (const RowExprP& a : e->args) {
    e->shape |= a->shape;
    if (a->op == "acc" && e->op != "sum") throw Refuse("a loop accumulator used other than by its reduction");
  }
  if (reduction) {
    if (e->args[0]->shape != kTile) throw Refuse("a reduction over a value that is not a full row tile");
    e->shape = kRow;
  }
  e->key = e->op + "[" + e->text + "](";
  for (const RowExprP& a : e->args) e->key += a->key + ",";
  e->key += ")";
  return e;
}

class Reader {
 public:
  Reader(const py::Module& m, const ir::Kernel& k) : m_(m) {
    for (const ir::KernelParam& p : k.signature)
      if (!p.is_constexpr && !p.dtype.empty() && p.dtype[0] == '*') pointers_.insert(p.name);
  }

  void block(const std::vector<py::Node*>& body) {
    for (const py::Node* s : body) stmt(s);
  }

  RowKernel result;

 private:
  const py::Module& m_;
  std::set<std::string> pointers_, loaded_;
  std::map<std::string, Val> env_;
  bool in_loop_ = false;
  std::set<std::string> loop_names_;  // names assigned in the current loop

  std::string src(const py::Node* n) const { return std::string(m_.text(n)); }

  void stmt(const py::Node* s) {
    if (s->is("Assign")) {
      const auto& targets = s->list("targets");
      if (targets.size() != 1) throw Refuse("chained assignment");
      assign(targets[0], s->child("value"));
    } else if (s->is("AnnAssign")) {
      // `R0_BLOCK: tl.constexpr = 512`, `RBLOCK: tl.constexpr = R0_BLOCK`: block sizes only.
      const py::Node* t = s->child("target");
      if (!t || !t->is("Name")) throw Refuse("annotated assignment to " + src(t));
      std::string name(t->ident("id"));
      if (name != "R0_BLOCK" && name != "RBLOCK") throw Refuse("annotated assignment to " + name);
      env_[name] = kind(Val::Opaque);
    } else if (s->is("For")) {
      // The loop over the row's blocks: its body's values are per-block, the accumulators it
      // carries are read away by eval (zero + v -> v, where(mask, next, acc) -> next).
      std::string it = ir::dotted_name(s->child("iter") ? s->child("iter")->child("func") : nullptr);
      const py::Node* var = s->child("target");
      if ((it != "tl.range" && it != "range") || !var || !var->is("Name") || var->ident("id") != "r0_offset")
        throw Refuse("a loop other than the one over the row's blocks");
      if (!s->list("orelse").empty()) throw Refuse("for-else");
      if (in_loop_) throw Refuse("nested loops");
      env_["r0_offset"] = kind(Val::Opaque);
      in_loop_ = true;
      loop_names_.clear();
      block(s->list("body"));
      in_loop_ = false;
      // After the loop only what it accumulated is the whole row's; every other value it
      // computed is its last block's.
      for (const std::string& n : loop_names_) {
        Val& v = env_[n];
        if (!(v.kind == Val::Expr && v.e->op == "acc")) v.stale = true;
      }
    } else if (s->is("Expr")) {
      const py::Node* v = s->child("value");
      std::string fn = v && v->is("Call") ? ir::dotted_name(v->child("func")) : "";
      if (fn == "tl.store") store(v);
      else if (fn != "tl.debug_barrier") throw Refuse("statement " + src(s));
    } else {
      throw Refuse(fmt::format("statement `{}`", src(s).substr(0, 60)));
    }
  }

  void assign(const py::Node* target, const py::Node* value) {
    if (target->is("Tuple")) {
      Val v = eval(value);
      const auto& elts = target->list("elts");
      if (v.kind != Val::Tuple || v.items.size() != elts.size()) throw Refuse("tuple assignment of " + src(value));
      for (size_t i = 0; i < elts.size(); ++i) {
        if (!elts[i]->is("Name")) throw Refuse("tuple assignment");
        bind(std::string(elts[i]->ident("id")), v.items[i]);
      }
      return;
    }
    if (!target->is("Name")) throw Refuse("assignment to " + src(target));
    std::string name(target->ident("id"));
    // The schedule's names: what they hold is fixed by Inductor's codegen, not by the math.
    if (name == "xindex") env_[name] = idx(0, 1, 0);
    else if (name == "r0_index" || name == "rindex") env_[name] = idx(1, 0, 0);
    else if (name == "xmask" || name == "r0_mask" || name == "rmask") env_[name] = kind(Val::Mask);
    else if (name == "xoffset" || name == "r0_offset" || name == "roffset" || name == "r0_base" || name == "rbase" ||
             name == "rnumel")
      env_[name] = kind(Val::Opaque);
    else if (name == "xnumel" || name == "r0_numel") {
      if (!ir::int_literal(value)) throw Refuse(name + " is assigned a non-constant");
      result.body_consts.push_back(fmt::format("{} = {}", name, *ir::int_literal(value)));
    } else {
      if (pointers_.count(name)) throw Refuse("a pointer parameter is reassigned");
      // `acc = tl.where(mask, next, acc)` in the loop: the row's accumulator.
      bool accumulates = in_loop_ && value->is("Call") && ir::dotted_name(value->child("func")) == "tl.where" &&
                         value->list("args").size() == 3 && value->list("args")[2]->is("Name") &&
                         value->list("args")[2]->ident("id") == name;
      Val v = eval(value);
      if (accumulates && v.kind == Val::Expr) v = expr(make("acc", {v.e}));
      bind(name, v);
    }
  }

  void bind(const std::string& name, Val v) {
    if (in_loop_) loop_names_.insert(name);
    env_[name] = std::move(v);
  }

  RowAccess address(const py::Node* n) {
    // ptr + (index)
    if (!n->is("BinOp") || n->ident("op") != "Add" || !n->child("left")->is("Name"))
      throw Refuse("address " + src(n));
    RowAccess a;
    a.ptr = std::string(n->child("left")->ident("id"));
    if (!pointers_.count(a.ptr)) throw Refuse(a.ptr + " is not a pointer parameter");
    Val i = eval(n->child("right"));
    if (i.kind == Val::Expr && i.integer) i = idx(0, 0, *i.integer);
    if (i.kind != Val::Idx) throw Refuse("index " + src(n->child("right")) + " is not affine in the row and column");
    a.r = i.r, a.x = i.x, a.c = i.c;
    return a;
  }

  void store(const py::Node* call) {
    const auto& args = call->list("args");
    if (args.size() < 2) throw Refuse("tl.store without a value");
    RowStore s{address(args[0]), nullptr};
    Val v = eval(args[1]);
    if (v.kind != Val::Expr) throw Refuse("stored value " + src(args[1]));
    if ((v.e->shape | s.at.shape()) != s.at.shape()) throw Refuse("stored value varies along a dimension its address does not");
    if (loaded_.count(s.at.ptr)) throw Refuse(s.at.ptr + " is both loaded and stored");
    for (const RowStore& o : result.stores)
      if (o.at.ptr == s.at.ptr) throw Refuse(s.at.ptr + " is stored twice");
    s.value = v.e;
    result.stores.push_back(s);
  }

  std::string keyword(const py::Node* call, std::string_view name) {
    for (const py::Node* kw : call->list("keywords"))
      if (kw->ident("arg") == name) return src(kw->child("value"));
    return "";
  }

  Val eval(const py::Node* n) {
    if (n->is("Name")) {
      std::string name(n->ident("id"));
      auto it = env_.find(name);
      if (it == env_.end()) throw Refuse("unknown name " + name);
      if (it->second.stale) throw Refuse(name + ", a per-block value, is used after its loop");
      return it->second;
    }
    if (n->is("Constant")) {
      Val v = expr(make("const", {}, src(n)));
      if (n->const_kind == py::ConstKind::Int) v.integer = std::stoll(n->value);
      return v;
    }
    if (n->is("UnaryOp")) {
      Val a = eval(n->child("operand"));
      if (n->ident("op") != "USub" || a.kind != Val::Expr) throw Refuse("unary " + src(n));
      if (a.integer) {
        Val v = expr(make("const", {}, src(n)));
        v.integer = -*a.integer;
        return v;
      }
      return expr(make("neg", {a.e}));
    }
    if (n->is("BinOp")) return binop(n);
    if (n->is("Subscript")) {
      // `v[:, None]` after a row reduction: the reader keeps rows as [XBLOCK, 1] already.
      Val a = eval(n->child("value"));
      std::string s = src(n->child("slice"));
      if (a.kind == Val::Expr && a.e->shape == kRow && (s == ":, None" || s == "(slice(None, None, None), None)"))
        return a;
      throw Refuse("subscript " + src(n));
    }
    if (n->is("Compare")) {
      // `roffset == 0`: the Welford accumulator's first-block flag.
      if (src(n) == "roffset == 0" || src(n) == "r0_offset == 0") return kind(Val::Opaque);
      throw Refuse("comparison " + src(n));
    }
    if (n->is("Call")) return call(n);
    throw Refuse("expression " + src(n));
  }

  Val binop(const py::Node* n) {
    Val a = eval(n->child("left")), b = eval(n->child("right"));
    std::string op(n->ident("op"));
    if (a.kind == Val::Mask && b.kind == Val::Mask && op == "BitAnd") return a;
    auto as_idx = [](Val v) {
      if (v.kind == Val::Expr && v.integer) return idx(0, 0, *v.integer);
      return v;
    };
    if (a.kind == Val::Idx || b.kind == Val::Idx) {
      Val p = as_idx(a), q = as_idx(b);
      if (p.kind != Val::Idx || q.kind != Val::Idx) throw Refuse("index arithmetic " + src(n));
      if (op == "Add") return idx(p.r + q.r, p.x + q.x, p.c + q.c);
      if (op == "Sub") return idx(p.r - q.r, p.x - q.x, p.c - q.c);
      if (op == "Mult" && (p.r == 0 && p.x == 0)) return idx(p.c * q.r, p.c * q.x, p.c * q.c);
      if (op == "Mult" && (q.r == 0 && q.x == 0)) return idx(q.c * p.r, q.c * p.x, q.c * p.c);
      throw Refuse("index " + src(n) + " is not affine");
    }
    if (a.kind != Val::Expr || b.kind != Val::Expr) throw Refuse("operands of " + src(n));
    static const std::map<std::string, std::string> ops = {{"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"},
                                                           {"Div", "div"}};
    auto it = ops.find(op);
    if (it == ops.end()) throw Refuse("operator " + op + " in " + src(n));
    // A sum accumulator's first update: zero + v.
    if (op == "Add" && a.e->op == "zero") return b;
    if (op == "Add" && b.e->op == "zero") return a;
    Val v = expr(make(it->second, {a.e, b.e}));
    if (a.integer && b.integer && op != "Div") v.integer = op == "Add" ? *a.integer + *b.integer
                                                         : op == "Sub" ? *a.integer - *b.integer
                                                                       : *a.integer * *b.integer;
    return v;
  }

  RowExprP arg_expr(const py::Node* call, size_t i) {
    const auto& args = call->list("args");
    if (args.size() <= i) throw Refuse("too few arguments in " + src(call));
    Val v = eval(args[i]);
    if (v.kind != Val::Expr) throw Refuse("argument of " + src(call));
    return v.e;
  }

  Val call(const py::Node* n) {
    const py::Node* func = n->child("func");
    const auto& args = n->list("args");
    // v.to(dtype)
    if (func->is("Attribute") && func->ident("attr") == "to") {
      Val v = eval(func->child("value"));
      if (v.kind == Val::Idx) return v;
      if (v.kind != Val::Expr || args.size() != 1) throw Refuse("conversion " + src(n));
      return expr(make("to", {v.e}, src(args[0])));
    }
    std::string fn = ir::dotted_name(func);
    if (fn == "tl.load") {
      if (args.empty()) throw Refuse("tl.load without an address");
      auto e = std::make_shared<RowExpr>();
      e->op = "load";
      e->at = address(args[0]);
      // The template loads everything before it stores: a pointer read back after a store
      // (a buffer reused in place) would read what the store has not written yet.
      for (const RowStore& st : result.stores)
        if (st.at.ptr == e->at.ptr) throw Refuse(e->at.ptr + " is loaded after it is stored");
      e->shape = e->at.shape();
      std::string ev = keyword(n, "eviction_policy");
      e->evict = ev.size() >= 2 ? ev.substr(1, ev.size() - 2) : "";
      e->key = fmt::format("load[{}+{}+{}r+{}x]", e->at.ptr, e->at.c, e->at.r, e->at.x);
      loaded_.insert(e->at.ptr);
      return expr(e);
    }
    if (fn == "tl.full" || fn == "tl.zeros") {
      // A [1, 1] / [1] constant stays as written; a full-block one is an accumulator's start,
      // which only `zero + v` may consume.
      std::string shape = args.empty() ? "" : src(args[0]);
      bool block = shape.find("BLOCK") != std::string::npos;
      if (!block && fn == "tl.full") return expr(make("const", {}, src(n)));
      std::string value = fn == "tl.zeros" ? "0" : args.size() > 1 ? src(args[1]) : "";
      if (block && (value == "0" || value == "0.0")) return expr(make("zero", {}));
      throw Refuse("constant " + src(n));
    }
    if (fn == "tl.broadcast_to") {
      if (args.empty()) throw Refuse("tl.broadcast_to without a value");
      Val v = eval(args[0]);
      if (v.kind != Val::Expr && v.kind != Val::Idx) throw Refuse("argument of " + src(n));
      return v;
    }
    if (fn == "tl.where") {
      // Masking of out-of-range lanes: the template masks its own reductions and stores.
      if (args.size() != 3 || eval(args[0]).kind != Val::Mask) throw Refuse("tl.where on a data condition");
      return expr(arg_expr(n, 1));
    }
    if (fn == "tl.sum") {
      if (args.size() != 2 || src(args[1]) != "1") throw Refuse("tl.sum over another axis");
      if (in_loop_) throw Refuse("a reduction inside the loop over the row's blocks");
      RowExprP v = arg_expr(n, 0);
      if (v->op == "acc") v = v->args[0];
      return expr(make("sum", {v}));
    }
    if (fn == "triton_helpers.welford_reduce") {
      RowExprP v = arg_expr(n, 0);
      Val t = kind(Val::Tuple);
      for (const char* op : {"wr_mean", "wr_m2", "wr_weight"}) t.items.push_back(expr(make(op, {v})));
      return t;
    }
    if (fn == "triton_helpers.welford") {
      if (in_loop_) throw Refuse("a Welford combine inside the loop over the row's blocks");
      auto unwrap = [](RowExprP e) { return e->op == "acc" ? e->args[0] : e; };
      RowExprP m = unwrap(arg_expr(n, 0)), m2 = unwrap(arg_expr(n, 1)), w = unwrap(arg_expr(n, 2));
      if (m->op != "wr_mean" || m2->op != "wr_m2" || w->op != "wr_weight" || m->args[0]->key != m2->args[0]->key ||
          m->args[0]->key != w->args[0]->key || args.size() != 4 || src(args[3]) != "1")
        throw Refuse("a Welford combine of unrelated accumulators");
      Val t = kind(Val::Tuple);
      for (const char* op : {"wmean", "wm2", "wcount"}) t.items.push_back(expr(make(op, {m->args[0]})));
      return t;
    }
    // tl.sqrt_rn: the correctly rounded square root newer Inductor writes where it wrote libdevice.sqrt.
    static const std::set<std::string> unary = {"libdevice.rsqrt", "libdevice.sqrt", "tl.sqrt_rn", "tl.sqrt",
                                                "tl_math.abs",     "tl_math.exp",    "tl_math.log", "libdevice.tanh",
                                                "tl.sigmoid"};
    static const std::set<std::string> binary = {"triton_helpers.maximum", "triton_helpers.minimum",
                                                 "libdevice.pow"};
    if (unary.count(fn) && args.size() == 1) return expr(make("call", {arg_expr(n, 0)}, fn));
    if (binary.count(fn) && args.size() == 2) return expr(make("call", {arg_expr(n, 0), arg_expr(n, 1)}, fn));
    if (fn == "tl.program_id" || fn == "tl.arange") return kind(Val::Opaque);
    throw Refuse("call " + (fn.empty() ? src(func) : fn));
  }
};

}  // namespace

std::optional<RowKernel> read_row_kernel(const ir::Kernel& k, std::string* why) {
  try {
    ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
    if (ks.jit_functions.size() != 1) throw Refuse("the kernel calls helper functions");
    Reader r(*ks.module, k);
    r.block(ks.entry->list("body"));
    if (r.result.stores.empty()) throw Refuse("the kernel stores nothing");
    // Values the reader only knows half of must not reach a store.
    std::function<void(const RowExprP&)> check = [&](const RowExprP& e) {
      if (e->op == "zero" || e->op == "acc" || e->op.rfind("wr_", 0) == 0)
        throw Refuse("an accumulator is stored before it is combined");
      for (const RowExprP& a : e->args) check(a);
    };
    for (const RowStore& s : r.result.stores) check(s.value);
    return std::move(r.result);
  } catch (const Refuse& e) {
    if (why) *why = e.what();
  } catch (const std::exception& e) {
    if (why) *why = std::string("the kernel does not parse: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace kopt::agents::templates
