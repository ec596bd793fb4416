#include "agents/coder/patterns/window_match.h"

#include "agents/coder/patterns/window_unroll.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "agents/coder/templates/body.h"
#include "artifact/ir.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::patterns {

using nlohmann::json;

namespace {

// An integer expression affine in the output index's digits: c + sum coef[i] * digit i.
struct Affine {
  std::map<int, int64_t> coef;
  int64_t c = 0;
  bool constant() const { return coef.empty(); }
};

Affine operator+(Affine a, const Affine& b) {
  for (const auto& [d, v] : b.coef)
    if ((a.coef[d] += v) == 0) a.coef.erase(d);
  a.c += b.c;
  return a;
}
Affine scaled(Affine a, int64_t f) {
  if (f == 0) return {};
  for (auto& [d, v] : a.coef) v *= f;
  a.c *= f;
  return a;
}

// One bound of a mask: `s * digit + k >= 0` (lower) or `s * digit + k < 0` (upper).
struct Bound {
  int digit;
  int64_t s, k;
  bool lower;
  bool operator<(const Bound& o) const {
    return std::tie(digit, s, k, lower) < std::tie(o.digit, o.s, o.k, o.lower);
  }
};

// What the evaluator knows of a value: an affine integer, a conjunction of bounds (with xmask
// or not; `never` for a constant false), an atom xindex // div % mod of the index, or nothing.
struct Sym {
  enum Kind { Opaque, Int, Cond, Atom } kind = Opaque;
  Affine a;
  std::set<Bound> bounds;
  bool xmask = false, never = false;
  int64_t div = 1, mod = 0;
};

struct Eval {
  const py::Module& m;
  std::map<std::string, Sym> env;
  std::vector<int64_t> bases;  // the digits' bases, innermost first (set after the index pass)

  std::string text(const py::Node* n) const { return std::string(m.text(n)); }

  // An atom xindex // div % mod as digits: each digit whose base lies in [div, div * mod).
  std::optional<Affine> expand(int64_t div, int64_t mod) const {
    Affine a;
    bool found = false;
    for (size_t i = 0; i < bases.size(); ++i) {
      if (bases[i] == div) found = true;
      if (bases[i] >= div && (mod == 0 || bases[i] < div * mod)) a.coef[int(i)] = bases[i] / div;
    }
    if (!found) return std::nullopt;
    return a;
  }

  Sym eval(const py::Node* n) {
    Sym s;
    if (n->is("Constant") && n->const_kind == py::ConstKind::Int) {
      s.kind = Sym::Int, s.a.c = std::stoll(n->value);
    } else if (n->is("Name")) {
      std::string id(n->ident("id"));
      if (id == "xindex") s.kind = Sym::Atom;
      else if (id == "xmask") s.kind = Sym::Cond, s.xmask = true;
      else if (auto it = env.find(id); it != env.end()) s = it->second;
    } else if (n->is("UnaryOp") && n->ident("op") == "USub") {
      Sym v = eval(n->child("operand"));
      if (v.kind == Sym::Int) s.kind = Sym::Int, s.a = scaled(v.a, -1);
    } else if (n->is("Call") && text(n->child("func")) == "tl.full" && n->list("args").size() == 3) {
      Sym v = eval(n->list("args")[1]);
      if (v.kind == Sym::Int) s = v;
    } else if (n->is("Call") && n->child("func")->is("Attribute") && n->child("func")->ident("attr") == "to" &&
               n->list("args").size() == 1) {
      // `(2*x1 - 1).to(tl.int32)`: a window coordinate cast to the index type (Inductor's Triton
      // backend for CPU tensors writes it; coordinates are far inside either type's range).
      std::string type = text(n->list("args")[0]);
      Sym v = eval(n->child("func")->child("value"));
      if (v.kind == Sym::Int && (type == "tl.int32" || type == "tl.int64")) s = v;
    } else if (n->is("BinOp")) {
      s = binop(std::string(n->ident("op")), eval(n->child("left")), eval(n->child("right")));
    } else if (n->is("Compare") && n->list("ops").size() == 1) {
      s = compare(std::string(n->list("ops")[0]->type), eval(n->child("left")), eval(n->list("comparators")[0]));
    }
    return s;
  }

  Sym binop(const std::string& op, const Sym& l, const Sym& r) {
    Sym s;
    if (l.kind == Sym::Atom && r.kind == Sym::Int && r.a.constant() && r.a.c > 0) {
      if (op == "FloorDiv" && l.mod == 0) s = l, s.div = l.div * r.a.c;
      else if (op == "Mod" && l.mod == 0) s = l, s.mod = r.a.c;
      return s;
    }
    Sym li = l, ri = r;
    for (Sym* x : {&li, &ri})
      if (x->kind == Sym::Atom)
        if (auto e = expand(x->div, x->mod)) x->kind = Sym::Int, x->a = *e;
    if (li.kind == Sym::Int && ri.kind == Sym::Int) {
      if (op == "Add") s.kind = Sym::Int, s.a = li.a + ri.a;
      else if (op == "Sub") s.kind = Sym::Int, s.a = li.a + scaled(ri.a, -1);
      else if (op == "Mult" && li.a.constant()) s.kind = Sym::Int, s.a = scaled(ri.a, li.a.c);
      else if (op == "Mult" && ri.a.constant()) s.kind = Sym::Int, s.a = scaled(li.a, ri.a.c);
    } else if (op == "BitAnd" && l.kind == Sym::Cond && r.kind == Sym::Cond) {
      s = l;
      s.bounds.insert(r.bounds.begin(), r.bounds.end());
      s.xmask |= r.xmask, s.never |= r.never;
    }
    return s;
  }

  // a >= b and a < b over affine integers: folded when constant, else a bound on one digit.
  Sym compare(const std::string& op, const Sym& l, const Sym& r) {
    Sym s;
    if (l.kind != Sym::Int || r.kind != Sym::Int || (op != "GtE" && op != "Lt")) return s;
    Affine f = l.a + scaled(r.a, -1);
    s.kind = Sym::Cond;
    const bool lower = op == "GtE";
    if (f.constant()) {
      s.never = lower ? f.c < 0 : f.c >= 0;
    } else if (f.coef.size() == 1) {
      s.bounds.insert({f.coef.begin()->first, f.coef.begin()->second, f.c, lower});
    } else {
      s.kind = Sym::Opaque;
    }
    return s;
  }
};


// Calls that do not act elementwise on the index's values: a body kept verbatim on a tile of
// another shape must have none.
bool not_elementwise(const std::string& f) {
  static const std::set<std::string> kNames = {
      "tl.arange", "tl.sum", "tl.max", "tl.min", "tl.reduce", "tl.cumsum", "tl.cumprod", "tl.associative_scan",
      "tl.program_id", "tl.num_programs", "tl.broadcast_to", "tl.reshape", "tl.view", "tl.sort", "tl.argmax",
      "tl.argmin", "tl.inline_asm_elementwise", "tl.xor_sum", "tl.gather", "tl.histogram", "tl.split", "tl.join"};
  if (kNames.count(f) || f.rfind("tl.atomic", 0) == 0) return true;
  if (f.rfind("triton_helpers.", 0) != 0) return false;
  return f.find("max2") != std::string::npos || f.find("min2") != std::string::npos ||
         f.find("with_index") != std::string::npos || f.find("welford") != std::string::npos ||
         f.find("scan") != std::string::npos || f == "triton_helpers.any" || f == "triton_helpers.prod";
}

const py::Node* keyword(const py::Node* call, const char* name) {
  for (const py::Node* kw : call->list("keywords"))
    if (kw->ident("arg") == name) return kw->child("value");
  return nullptr;
}

}  // namespace

std::optional<Window> match_window(const KernelProfile& k, std::string* why) {
  auto no = [&](std::string w) -> std::optional<Window> { return *why = std::move(w), std::nullopt; };
  const ir::Kernel& ker = *k.kernel;
  // A big window Inductor wrote as a persistent reduction over its elements is read in its
  // pointwise form (window_unroll.h); r0_numel is then no part of the window's arguments.
  std::optional<Unrolled> unrolled;
  if (ker.kind == "persistent_reduction") {
    std::string why_unrolled;
    unrolled = unroll_reduction(ker, &why_unrolled);
    if (!unrolled) return no("a reduction that is not a window's elements combined: " + why_unrolled);
  } else if (ker.kind != "pointwise") {
    return no("not a pointwise kernel");
  }
  std::vector<std::string> runtime;
  std::vector<size_t> kept;  // the launch arguments of `runtime`, by position
  size_t position = 0;
  for (const ir::KernelParam& p : ker.signature) {
    if (!p.is_constexpr) {
      if (!(unrolled && p.name == "r0_numel")) runtime.push_back(p.name), kept.push_back(position);
      ++position;
    } else if (p.name != "XBLOCK") {
      return no(fmt::format("a pointwise kernel tiled by {} besides XBLOCK", p.name));
    }
  }
  if (runtime.empty() || runtime.back() != "xnumel") return no("the kernel has no xnumel");
  if (k.launches.empty()) return no("no launch recorded");
  for (const json& l : k.launches)
    if (l["args"] != k.launches.front()["args"]) return no("launched with several shapes");
  const json& launched = k.launches.front()["args"];
  if (launched.size() != position) return no("the launch's arguments do not match the signature");
  json args = json::array();
  for (size_t i : kept) args.push_back(launched[i]);
  auto lines = unrolled ? std::optional(unrolled->lines) : templates::straight_line_body(ker, why, true);
  if (!lines) return std::nullopt;
  ir::KernelSource ks = ir::parse_kernel_source(unrolled ? unrolled->source : ker.source, ker.name, ker.name);
  const std::vector<py::Node*>& stmts = ks.entry->list("body");
  if (stmts.size() != lines->size()) return no("the kernel body could not be read statement by statement");

  Window w;
  w.xnumel = args.back().value("value", int64_t{0});
  if (w.xnumel <= 0) return no("xnumel is not a known integer");
  Eval ev{*ks.module, {}, {}};
  auto assigned = [](const py::Node* st) -> std::string {
    if (!st->is("Assign") || st->list("targets").size() != 1 || !st->list("targets")[0]->is("Name")) return "";
    return std::string(st->list("targets")[0]->ident("id"));
  };

  // First pass: the index's decomposition (xindex, its digits) gives the digits' bases.
  std::set<int64_t> bases = {1};
  std::vector<bool> is_index(stmts.size(), false);
  for (size_t i = 0; i < stmts.size(); ++i) {
    std::string name = assigned(stmts[i]);
    if (name == "xoffset" || name == "xindex" || name == "xmask") {
      is_index[i] = true;
      if (name == "xoffset") w.wide = lines->at(i).find("int64") != std::string::npos;
      continue;
    }
    if (name == "xnumel") {
      is_index[i] = true, w.xnumel_line = lines->at(i);
      continue;
    }
    if (name.empty()) continue;
    Sym v = ev.eval(stmts[i]->child("value"));
    if (v.kind != Sym::Atom) continue;
    is_index[i] = true, ev.env[name] = v;
    w.index_lines.push_back(lines->at(i));
    bases.insert(v.div);
    if (v.mod) bases.insert(v.div * v.mod);
  }
  ev.bases.assign(bases.begin(), bases.end());
  for (size_t i = 0; i + 1 < ev.bases.size(); ++i)
    if (ev.bases[i + 1] % ev.bases[i] != 0) return no("the index's decomposition is not mixed-radix");
  if (w.xnumel % ev.bases.back() != 0) return no("xnumel is not a whole number of the outermost digit");
  for (size_t i = 0; i < ev.bases.size(); ++i) {
    WindowDigit d;
    d.base = ev.bases[i];
    d.radix = (i + 1 < ev.bases.size() ? ev.bases[i + 1] : w.xnumel) / d.base;
    w.digits.push_back(d);
  }
  for (auto& [name, v] : ev.env) {
    auto e = ev.expand(v.div, v.mod);
    if (!e) return no("an index digit is not whole");
    v.kind = Sym::Int, v.a = *e;
  }

  // Second pass: the body. Window loads become values the generated kernel computes; stores are
  // masked by its xmask; everything else is kept verbatim and must act elementwise.
  std::vector<std::set<Bound>> masks;
  std::map<int, int64_t> coef;  // the window loads' common map (coefficient per digit)
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (is_index[i]) continue;
    const py::Node* st = stmts[i];
    const py::Node* value = st->is("Assign") ? st->child("value") : st->is("Expr") ? st->child("value") : nullptr;
    std::string bad;
    py::walk(st, [&](const py::Node* n) {
      if (n->is("Name") && (n->ident("id") == "XBLOCK" || n->ident("id") == "xoffset")) bad = "uses XBLOCK";
      if (n->is("Subscript")) bad = "subscripts a tensor";
      if (n->is("Call") && not_elementwise(ev.text(n->child("func"))))
        bad = "calls " + ev.text(n->child("func"));
    });
    if (!bad.empty()) return no("a statement of the body " + bad + ": it is not elementwise");
    if (value && value->is("Call") && ev.text(value->child("func")) == "tl.store") {
      const auto& a = value->list("args");
      const py::Node* mask = a.size() > 2 ? a[2] : keyword(value, "mask");
      bool plain = !mask || ev.text(mask) == "xmask" || ev.text(mask) == "None";
      if (a.size() < 2 || a.size() > 3 || value->list("keywords").size() > (a.size() == 3 ? 0u : 1u) || !plain)
        return no("a store not written tl.store(ptr, value, xmask)");
      w.body.push_back(fmt::format("tl.store({}, {}, xmask)", ev.text(a[0]), ev.text(a[1])));
      continue;
    }
    // A load, or a load converted at once (Inductor's `tl.load(...).to(tl.float32)` of 16-bit inputs).
    const py::Node* load = value;
    std::string suffix;
    if (load && load->is("Call") && load->child("func")->is("Attribute") && load->child("func")->ident("attr") == "to" &&
        load->child("func")->child("value")->is("Call")) {
      load = load->child("func")->child("value");
      suffix = ks.module->source().substr(load->end.offset, value->end.offset - load->end.offset);
    }
    const bool loads = py::any_node(st, [&](const py::Node* n) {
      return n->is("Call") && ev.text(n->child("func")) == "tl.load";
    });
    if (loads && !(load && load->is("Call") && ev.text(load->child("func")) == "tl.load"))
      return no("a load not written tmp = tl.load(ptr + index, ...)");
    if (loads) {
      const auto& a = load->list("args");
      value = load;
      std::string target = assigned(st);
      if (target.empty() || a.empty() || !a[0]->is("BinOp") || a[0]->ident("op") != "Add" ||
          !a[0]->child("left")->is("Name"))
        return no("a load not written tmp = tl.load(ptr + index, ...)");
      std::string ptr(a[0]->child("left")->ident("id"));
      if (!w.ptr.empty() && ptr != w.ptr) return no(fmt::format("loads from {} and {}: not one windowed input", w.ptr, ptr));
      w.ptr = ptr;
      Sym index = ev.eval(a[0]->child("right"));
      if (index.kind == Sym::Atom)
        if (auto e = ev.expand(index.div, index.mod)) index.kind = Sym::Int, index.a = *e;
      if (index.kind != Sym::Int) return no(fmt::format("the index of {} is not affine in the output index", target));
      const py::Node* mask = a.size() > 1 ? a[1] : keyword(value, "mask");
      if (mask && mask->is("Constant") && mask->const_kind == py::ConstKind::None) mask = nullptr;
      Sym m;
      if (mask) m = ev.eval(mask);
      if (mask && (m.kind != Sym::Cond || m.never))
        return no(fmt::format("the mask of {} is not the bounds of its window coordinates", target));
      const py::Node* other = keyword(value, "other");
      std::string other_text = other ? ev.text(other) : "";
      if (!w.loads.empty() && other_text != w.other) return no("the window's loads fill masked elements differently");
      w.other = other_text;
      WindowLoad l;
      l.target = target, l.constant = index.a.c;
      if (!w.loads.empty() && index.a.coef != coef)
        return no(fmt::format("{} reads {} through another map than the window's first load", target, ptr));
      coef = index.a.coef;
      masks.push_back(m.bounds);
      w.body.push_back(fmt::format("{} = win_{}{}", target, w.loads.size(), suffix));
      w.loads.push_back(l);
      ev.env[target] = Sym{};
      continue;
    }
    std::string name = assigned(st);
    if (!name.empty()) ev.env[name] = ev.eval(value);
    w.body.push_back(lines->at(i));
  }
  if (w.loads.size() < 2) return no("fewer than two loads from one input: no window");

  // The input's dimensions (from the launch) give each digit's stride and each load's offsets.
  size_t arg = std::find(runtime.begin(), runtime.end(), w.ptr) - runtime.begin();
  if (arg >= runtime.size() || !args[arg].contains("shape") || !args[arg].contains("stride"))
    return no(fmt::format("{} is not a tensor argument", w.ptr));
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size), size-1 dimensions left out
  for (size_t d = 0; d < args[arg]["shape"].size(); ++d)
    if (args[arg]["shape"][d].get<int64_t>() != 1) dims.emplace_back(args[arg]["stride"][d], args[arg]["shape"][d]);
  std::sort(dims.rbegin(), dims.rend());
  if (dims.empty() || dims.back().first != 1) return no(fmt::format("{} has no contiguous dimension", w.ptr));
  for (const auto& [s, n] : dims)
    if (s <= 0) return no(fmt::format("{} has a broadcast or negative stride", w.ptr));
  std::vector<int> dim_of(w.digits.size(), -1);
  for (int i = 0; i < int(w.digits.size()); ++i) {
    auto it = coef.find(i);
    if (it == coef.end()) continue;
    w.digits[i].coef = it->second;
    for (int d = 0; d < int(dims.size()) && dim_of[i] < 0; ++d)
      if (dims[d].first <= it->second && it->second % dims[d].first == 0) dim_of[i] = d;
    if (dim_of[i] < 0) return no("a digit's coefficient is no multiple of the input's strides");
    w.digits[i].stride = it->second / dims[dim_of[i]].first;
  }
  std::vector<std::vector<int64_t>> dim_offsets;
  for (WindowLoad& l : w.loads) {
    std::vector<int64_t> off(dims.size());
    int64_t c = l.constant;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t e = dims[d].first;
      off[d] = e == 1 ? c : floordiv(c + e / 2, e);
      c -= off[d] * e;
    }
    dim_offsets.push_back(off);
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    bool moves = std::any_of(dim_offsets.begin(), dim_offsets.end(), [&](const auto& o) { return o[d] != 0; });
    int owner = int(std::find(dim_of.begin(), dim_of.end(), int(d)) - dim_of.begin());
    if (moves && owner == int(dim_of.size())) return no("the window moves along a dimension no output digit walks");
    if (moves) w.digits[owner].window = true, w.digits[owner].extent = dims[d].second;
  }
  for (size_t j = 0; j < w.loads.size(); ++j) {
    w.loads[j].offset.assign(w.digits.size(), 0);
    for (size_t i = 0; i < w.digits.size(); ++i)
      if (w.digits[i].window) w.loads[j].offset[i] = dim_offsets[j][dim_of[i]];
  }
  // Channels-last: the innermost digit is the channel, the window moves along the next ones.
  w.channels_inner = !w.digits[0].window;
  if (w.channels_inner && (w.digits.size() < 2 || !w.digits[1].window))
    return no("neither the output's innermost digit nor the next one is a window dimension");
  if (dim_of[0] != int(dims.size()) - 1) return no("the innermost digit does not walk the input's contiguous dimension");
  // A mask must be exactly the bounds of the load's window coordinates; a coordinate it does not
  // bound must stay inside the input for every output (Inductor reads it unmasked).
  for (size_t j = 0; j < w.loads.size(); ++j) {
    std::set<Bound> expect, seen = masks[j];
    for (const Bound& b : seen)
      if (b.digit >= int(w.digits.size()) || !w.digits[b.digit].window)
        return no(fmt::format("the mask of {} bounds a digit the window does not move along", w.loads[j].target));
    for (size_t i = 0; i < w.digits.size(); ++i) {
      const WindowDigit& d = w.digits[i];
      if (!d.window) continue;
      int64_t off = w.loads[j].offset[i];
      Bound lo{int(i), d.stride, off, true}, hi{int(i), d.stride, off - d.extent, false};
      bool has_lo = seen.count(lo), has_hi = seen.count(hi);
      if (has_lo != has_hi) return no(fmt::format("{} is bounded on one side only", w.loads[j].target));
      if (!has_lo && (off < 0 || (d.radix - 1) * d.stride + off >= d.extent))
        return no(fmt::format("{} is unmasked but digit {} (radix {}) reaches past the input's extent {} (a digit "
                              "Inductor merged over two output dimensions)", w.loads[j].target, i, d.radix, d.extent));
      seen.erase(lo), seen.erase(hi);
    }
    if (!seen.empty())
      return no(fmt::format("the mask of {} is not the bounds of its window coordinates", w.loads[j].target));
  }
  int64_t numel = 1;
  for (const auto& d : args[arg]["shape"]) numel *= d.get<int64_t>();
  w.wide = w.wide || numel >= (int64_t{1} << 31);
  return w;
}

}  // namespace kopt::agents::patterns
