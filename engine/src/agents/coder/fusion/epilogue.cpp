#include "agents/coder/fusion/epilogue.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/fusion/pointwise.h"
#include "agents/coder/templates/body.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::fusion {

namespace {

constexpr const char* kPrefix = "fuse_";

// The buffer's (size, stride) per dimension as its allocation wrote them; empty where one is not a
// number.
std::vector<std::pair<int64_t, int64_t>> layout_of(const ir::Function& f, const std::string& buffer) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const ir::Alloc& a : f.allocs) {
    if (a.buffer != buffer || a.sizes.size() != a.strides.size()) continue;
    try {
      for (size_t i = 0; i < a.sizes.size(); ++i) out.emplace_back(std::stoll(a.sizes[i]), std::stoll(a.strides[i]));
    } catch (const std::exception&) {
      return {};
    }
    return out;
  }
  return out;
}

// The producer's stores through `ptr` (a template's peeled first chunk and its loop store twice),
// when it never reads or passes `ptr` otherwise; none, with the reason, else.
std::vector<const py::Node*> stores_through(const ir::KernelSource& ks, const std::string& ptr, std::string* why) {
  std::vector<const py::Node*> found;
  size_t uses = 0;
  py::walk(ks.entry, [&](const py::Node* n) {
    if (n->is("Name") && n->ident("id") == ptr) ++uses;
    if (n->is("Expr") && n->child("value")->is("Call"))
      if (auto s = store_of(n->child("value")); s && s->ptr == ptr) found.push_back(n);
  });
  // The parameter list names it as an `arg` node, not a Name: every Name use must be a store's.
  if (found.empty()) *why = fmt::format("the producer has no `tl.store({} + (index), ...)`", ptr);
  else if (uses != found.size())
    *why = fmt::format("the producer uses {} besides its stores (a load, a helper call)", ptr);
  else return found;
  return {};
}

// An affine map of the consumer's digits written over the fused kernel's digit names, innermost digit first
// (`1 * fuse_x0 + 1024 * fuse_x1`), the constant last.
std::string render(const Affine& a, const std::vector<Digit>& digits) {
  std::string out;
  for (const Digit& d : digits)
    if (auto it = a.coef.find(d.name); it != a.coef.end())
      out += fmt::format("{}{} * {}{}", out.empty() ? "" : " + ", it->second, kPrefix, d.name);
  if (a.c != 0 || out.empty()) out += fmt::format("{}{}", out.empty() ? "" : " + ", a.c);
  return out;
}

// What the producer's own statements say of the names its store index is written in: the values each
// name takes, and how its r axis is tiled, for writing the fused store's address over those names.
struct ProducerIndex {
  bool compose = false;  // write the store over these names where it simplifies (else through the digits)
  // name -> n: the name is in [0, n) wherever the store's mask holds (a name of x where xmask does, of r where
  // r0_mask does: Inductor masks every store by those where lanes can run past the numel). Masked-off lanes may
  // compute an address the simplification gets wrong; the store keeps its mask, so they write nothing. The fold
  // without composition relies on the same: an address outside the buffer's elements inverts to digits outside
  // the consumer's.
  std::map<std::string, int64_t> range;
  std::map<std::string, std::string> def;  // each name's one definition as written (names bound otherwise left out)
  std::set<std::string> x_names;           // xindex and the names it defines (`x3 = xindex`, `x0 = xindex % 40`)
  std::set<std::string> r_whole;           // r0_index and the names bound to it whole (`r0_2 = r0_index`)
  // At lane k of a 2-D [XBLOCK, R0_BLOCK] tile, the r index of lane R0_BLOCK - 1 - k; "" when the kernel is not
  // such a tile as Inductor writes it (a flipped store needs the lane index itself).
  std::string flipped_r;
  std::vector<const py::Node*> loops;  // the `for r0_offset in ...` loops of a looped kernel (the flipped r is theirs)
};

ProducerIndex producer_index(const ir::KernelSource& ks) {
  const py::Module& m = *ks.module;
  ProducerIndex out;
  out.compose = true;
  std::map<std::string, const py::Node*> value;
  std::set<std::string> unsure;  // names bound differently twice, or otherwise than by `name = value`
  bool other_tiles = false;
  py::visit(ks.entry, [&](const py::Node* n, const py::Node* parent) {
    if (n->is("arg") && (n->ident("arg") == "YBLOCK" || n->ident("arg") == "ZBLOCK")) other_tiles = true;
    if (n->is("Name") && (n->ident("id") == "YBLOCK" || n->ident("id") == "ZBLOCK")) other_tiles = true;
    if (n->is("For") && n->child("target") && n->child("target")->is("Name") &&
        n->child("target")->ident("id") == "r0_offset")
      out.loops.push_back(n);
    auto target_of = [](const py::Node* st) -> const py::Node* {
      if (st && st->is("Assign") && st->list("targets").size() == 1) return st->list("targets").front();
      if (st && st->is("AnnAssign")) return st->child("target");
      return nullptr;
    };
    if (const py::Node* target = target_of(n); target && target->is("Name") && n->child("value")) {
      std::string name(target->ident("id"));
      std::string text(m.text(n->child("value")));
      if (auto it = out.def.find(name); it != out.def.end() && it->second != text) unsure.insert(name);
      out.def[name] = text;
      value.emplace(name, n->child("value"));
    } else if (n->is("Name") && n->ident("ctx") == "Store" && target_of(parent) != n) {
      unsure.insert(std::string(n->ident("id")));  // `x0 += 1`, a tuple's element, a loop's target
    }
    return py::Step::Descend;
  });
  for (const std::string& n : unsure) out.def.erase(n), value.erase(n);
  auto numel = [&](const char* name) -> int64_t {
    auto it = value.find(name);
    if (it == value.end() || !it->second->is("Constant") || it->second->const_kind != py::ConstKind::Int) return 0;
    return std::stoll(it->second->value);
  };
  std::map<std::string, int64_t> numels = {{"xindex", numel("xnumel")}, {"r0_index", numel("r0_numel")}};
  if (value.count("xindex")) out.x_names.insert("xindex");
  if (value.count("r0_index")) out.r_whole.insert("r0_index");
  for (const auto& [index, n] : numels)
    if (n > 0 && value.count(index)) out.range[index] = n;
  for (const auto& [name, v] : value) {
    auto d = ir::axis_digit(name, v);
    if (!d || !numels.count(d->index)) continue;
    if (d->index == "xindex") out.x_names.insert(name);
    if (d->index == "r0_index" && d->digit.base == 1 && d->digit.radix == 0) out.r_whole.insert(name);
    int64_t n = numels[d->index];
    if (d->digit.radix > 0) out.range[name] = d->digit.radix;
    else if (n > 0) out.range[name] = (n + d->digit.base - 1) / d->digit.base;
  }
  auto is = [&](const char* name, const char* text) {
    auto it = out.def.find(name);
    return it != out.def.end() && it->second == text;
  };
  if (other_tiles || !is("xindex", "xoffset + tl.arange(0, XBLOCK)[:, None]")) return out;
  if (!out.loops.empty() && is("r0_index", "r0_offset + r0_base") && is("r0_base", "tl.arange(0, R0_BLOCK)[None, :]"))
    out.flipped_r = "(r0_offset + (R0_BLOCK - 1) - r0_base)";
  else if (out.loops.empty() && is("r0_index", "tl.arange(0, R0_BLOCK)[None, :]"))
    out.flipped_r = "((R0_BLOCK - 1) - r0_index)";
  return out;
}

// An affine map of the producer's names as Inductor writes an index (`1099 - r0_2 + 1100*x3`): the constant
// first, then the terms by their coefficients' size (the innermost first); `as` gives a name's text where it is
// written otherwise (the flipped r).
std::string written(const Affine& a, const std::map<std::string, std::string>& as = {}) {
  std::vector<std::pair<std::string, int64_t>> terms(a.coef.begin(), a.coef.end());
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& x, const auto& y) { return std::llabs(x.second) < std::llabs(y.second); });
  std::string out = a.c != 0 || terms.empty() ? std::to_string(a.c) : "";
  for (const auto& [n, k] : terms) {
    std::string name = as.count(n) ? as.at(n) : n;
    int64_t m = std::llabs(k);
    std::string term = m == 1 ? name : fmt::format("{}*{}", m, name);
    if (out.empty()) out = k < 0 ? "-" + term : term;
    else out += fmt::format(" {} {}", k < 0 ? "-" : "+", term);
  }
  return out;
}

// The fused store's address as one affine map of the producer's names (`1099 - r0_2 + 1100*x3`): the consumer's
// store index over its digits, each digit invert() wrote (`(1099 - (fuse_a % 1152))`) read with the address being
// the producer's store index and simplified under the producer's ranges. Written through `%` and `//` Triton's
// axis analysis sees no contiguity, so every lane stores alone: a reversed cumprod over a transposed bf16 tensor,
// fused so, ran 0.83x its two unfused kernels on an H100 (9.6 ms against 7.97 ms at 197x2448x2161). Nothing
// where the producer's index is not affine or a digit does not simplify: the store keeps the digits.
std::optional<Affine> producer_address(const py::Node* index, const Affine& store, const Pointwise& c,
                                       const std::vector<std::string>& digit_exprs, const ProducerIndex& pi) {
  auto at = affine(index);
  if (!at) return std::nullopt;
  Affine out{{}, store.c};
  for (size_t i = 0; i < c.digits.size(); ++i) {
    auto k = store.coef.find(c.digits[i].name);
    if (k == store.coef.end()) continue;
    std::unique_ptr<py::Module> m;
    try {
      m = py::parse(digit_exprs[i] + "\n", "<digit>");
    } catch (const std::exception&) {
      return std::nullopt;
    }
    const auto& body = m->root()->list("body");
    if (body.size() != 1 || !body.front()->is("Expr")) return std::nullopt;
    auto d = ir::affine(body.front()->child("value"), {{std::string(kPrefix) + "a", *at}}, pi.range);
    if (!d) return std::nullopt;
    out = ir::plus(out, *d, k->second);
  }
  return out;
}

// The name of the r index whole that `a` descends along (coefficient -1), when the store can write the tile
// flipped along r instead, so that its addresses ascend: the producer a 2-D [XBLOCK, R0_BLOCK] tile in Inductor's
// form, every other name of `a` over x alone, the store inside the r loop (a looped kernel), its mask only xmask
// and r0_mask as Inductor defines them (the flipped store recomputes the mask: tl.flip bitcasts to an integer of
// the value's width, which a bool mask is not), and a value that is not a bool itself. "" else.
std::string descending_r(const Affine& a, const py::Node* st, const Access& ps, const ProducerIndex& pi,
                         const std::string& buf_type) {
  if (pi.flipped_r.empty() || buf_type == "*i1") return "";
  std::string r;
  for (const auto& [n, k] : a.coef)
    if (k == -1 && pi.r_whole.count(n)) r = n;
  if (r.empty()) return "";
  for (const auto& [n, k] : a.coef)
    if (n != r && !pi.x_names.count(n)) return "";
  if (!pi.loops.empty() && std::none_of(pi.loops.begin(), pi.loops.end(), [&](const py::Node* l) {
        return l->begin.offset <= st->begin.offset && st->end.offset <= l->end.offset;
      }))
    return "";
  static const std::map<std::string, std::set<std::string>> kMasks = {
      {"xmask", {"xindex < xnumel", "tl.full([XBLOCK], True, tl.int1)[:, None]"}},
      {"r0_mask", {"r0_index < r0_numel", "tl.full([R0_BLOCK], True, tl.int1)[None, :]"}}};
  bool plain = !ps.mask || !py::any_node(ps.mask, [&](const py::Node* n) {
    if (!n->is("Name")) return false;
    auto m = kMasks.find(std::string(n->ident("id")));
    auto d = m == kMasks.end() ? pi.def.end() : pi.def.find(m->first);
    return d == pi.def.end() || !m->second.count(d->second);
  });
  return plain ? r : "";
}

// One store of the producer, replaced: the address it wrote in the buffer, the consumer's digits read
// back from it, the consumer's loads (the buffer's value is what the producer stored; any other buffer is
// loaded through the producer's own parameter bound to it, at the consumer's index), its elementwise
// statements on them, a store at the consumer's index: written over the producer's names where that
// simplifies (producer_address), flipped along r where it then descends along r (descending_r).
std::string fold(const py::Module& pm, const py::Node* st, const Pointwise& c, size_t held_load,
                 const std::map<std::string, std::string>& other_params, const std::vector<std::string>& digit_exprs,
                 const std::string& out, const std::string& buf_type, const std::string& cs,
                 const ProducerIndex& pi) {
  auto ps = store_of(st->child("value"));
  std::string ind(st->begin.col, ' ');
  // The digits stay defined where the store no longer reads them: the consumer's other loads and statements may,
  // and the compiler drops them where nothing does.
  std::string text = fmt::format("{}a = {}\n", kPrefix, pm.text(ps->index));
  for (size_t i = 0; i < c.digits.size(); ++i)
    text += fmt::format("{}{}{} = {}\n", ind, kPrefix, c.digits[i].name, digit_exprs[i]);
  std::string mask = ps->mask ? ", " + std::string(pm.text(ps->mask)) : "";
  for (size_t i = 0; i < c.loads.size(); ++i) {
    const Pointwise::Load& l = c.loads[i];
    std::string value;
    if (i == held_load) {
      // The buffer held the value converted to its type; the consumer loaded that.
      value = fmt::format("({}).to({})", pm.text(ps->value), tl_dtype(buf_type));
    } else {
      value = fmt::format("tl.load({} + ({}){})", other_params.at(l.at.ptr),
                          render(*digit_affine(c, l.at.index), c.digits), mask);
    }
    if (!l.convert.empty()) value = fmt::format("{}.to({})", value, l.convert);  // as the load did
    text += fmt::format("{}{}{} = {}\n", ind, kPrefix, l.target, value);
  }
  for (const py::Node* b : c.body) text += ind + prefixed(cs, b, c.locals, kPrefix) + "\n";
  std::string value = prefixed(cs, c.store.value, c.locals, kPrefix);
  Affine store = *digit_affine(c, c.store.index);
  auto a = pi.compose ? producer_address(ps->index, store, c, digit_exprs, pi) : std::nullopt;
  if (!a) return text + fmt::format("{}tl.store({} + ({}), {}{})", ind, out, render(store, c.digits), value, mask);
  std::string r = descending_r(*a, st, *ps, pi, buf_type);
  if (r.empty()) return text + fmt::format("{}tl.store({} + ({}), {}{})", ind, out, written(*a), value, mask);
  // Position k of the tile stores lane R0_BLOCK - 1 - k: the same (address, value) pairs, the addresses now
  // ascending along r. Lane k's r index is replaced by lane R0_BLOCK - 1 - k's in the address and in a mask
  // that bounds r (an all-true r0_mask is the same at every position); the value is flipped as a tile (computed
  // in lane order, as the consumer's other loads are).
  std::map<std::string, std::string> flipped = {{r, pi.flipped_r}};
  std::string fmask = mask;
  if (ps->mask && pi.def.count("r0_mask") && pi.def.at("r0_mask") == "r0_index < r0_numel")
    fmask = ", " + templates::substitute_words(std::string(pm.text(ps->mask)),
                                               {{"r0_mask", fmt::format("({} < r0_numel)", pi.flipped_r)}});
  return text + fmt::format("{}tl.store({} + ({}), tl.flip(tl.broadcast_to({}, [XBLOCK, R0_BLOCK]), 1){})", ind,
                            out, written(*a, flipped), value, fmask);
}

// The fold with its stores written over the producer's names where they simplify (`compose`), or through the
// consumer's digits as the inverse gives them.
std::optional<stitch::RegionEdit> build(const Pair& p, std::string* why, bool compose) {
  auto no = [&](std::string w) -> std::optional<stitch::RegionEdit> {
    return *why = std::move(w), std::nullopt;
  };
  const ir::Launch& lp = p.f->launches[p.producer];
  const ir::Launch& lc = p.f->launches[p.consumer];
  const ir::Kernel& kp = p.art->kernels[lp.kernel];
  const ir::Kernel& kc = p.art->kernels[lc.kernel];
  std::string pp = param_bound(lp, p.buffer), pc = param_bound(lc, p.buffer);
  if (pp.empty() || pc.empty()) return no(fmt::format("{} is not passed once to each kernel", p.buffer));

  std::string w;
  auto c = read_pointwise(kc, p.consumer_source, &w, /*tile=*/true, /*tiled=*/true);
  if (!c) return no("the consumer: " + w);
  // The consumer's load of the buffer, and every other buffer it loads as the producer's own parameter for it
  // (an exclusive scan's `cumsum - x` reads the scan's input again).
  size_t held = c->loads.size();
  std::map<std::string, std::string> others;
  for (size_t i = 0; i < c->loads.size(); ++i) {
    const Pointwise::Load& l = c->loads[i];
    if (l.at.ptr == pc) {
      if (held != c->loads.size()) return no(fmt::format("the consumer {} loads {} twice", kc.name, pc));
      held = i;
      continue;
    }
    std::string own = param_bound(lp, arg_of(lc, l.at.ptr));
    if (own.empty())
      return no(fmt::format("the consumer {} loads {} ({}), which the producer is not passed; only buffers the "
                            "producer takes fold into its store", kc.name, arg_of(lc, l.at.ptr), l.at.ptr));
    others[l.at.ptr] = own;
  }
  if (held == c->loads.size()) return no(fmt::format("the consumer {} does not load {}", kc.name, pc));
  // The fused statements define the consumer's digits, not its names for a whole axis index (`x2 = xindex`):
  // a statement computing with one would read the producer's variable of that name.
  std::string whole_use;
  auto uses_whole = [&](const py::Node* n) {
    py::walk(n, [&](const py::Node* m) {
      if (m->is("Name") && c->whole.count(std::string(m->ident("id")))) whole_use = m->ident("id");
    });
  };
  for (const py::Node* b : c->body) uses_whole(b);
  uses_whole(c->store.value);
  if (!whole_use.empty())
    return no(fmt::format("the consumer {} computes with its index {} (not a digit)", kc.name, whole_use));
  // Every index the fused statements write is over the consumer's digits alone (no index of its own).
  auto over_digits = [&](const py::Node* index) {
    auto a = digit_affine(*c, index);
    if (!a) return false;
    for (const auto& [n, _] : a->coef)
      if (std::none_of(c->digits.begin(), c->digits.end(), [&](const Digit& d) { return d.name == n; })) return false;
    return true;
  };
  if (!over_digits(c->store.index))
    return no(fmt::format("the consumer {}'s store index is not affine in its digits", kc.name));
  for (const Pointwise::Load& l : c->loads)
    if (l.at.ptr != pc && !over_digits(l.at.index))
      return no(fmt::format("the consumer's load of {} is not affine in its digits", l.at.ptr));
  int64_t numel = numel_of(*p.f, p.buffer);
  if (numel != c->xnumel)
    return no(fmt::format("the consumer reads {} elements, {} holds {}", c->xnumel, p.buffer, numel));
  auto load_index = digit_affine(*c, c->loads[held].at.index);
  if (!load_index) return no("the consumer's load index is not affine in its digits");
  std::vector<std::string> digit_exprs;
  if (auto inv = invert(*load_index, c->digits, numel, std::string(kPrefix) + "a", &w, layout_of(*p.f, p.buffer)))
    digit_exprs = *inv;
  else return no(w + " (not an index permutation)");
  std::string out_param = c->store.ptr;
  std::string out_type = pointer_type(kc, out_param), buf_type = pointer_type(kp, pp);
  if (divisible(kp, pp) && !divisible(kc, out_param))
    return no(fmt::format("{} is declared 16-byte aligned in the producer, the consumer's output {} is not", pp,
                          arg_of(lc, out_param)));
  if (out_type != buf_type || tl_dtype(buf_type).empty())
    return no(fmt::format("the consumer's output is {}, the buffer {}: the producer's store would change type",
                          out_type, buf_type));

  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(p.producer_source, kp.name, kp.name);
  } catch (const std::exception& e) {
    return no(e.what());
  }
  std::vector<const py::Node*> stores = stores_through(ks, pp, &w);
  if (stores.empty()) return no(w);
  const py::Module& pm = *ks.module;
  const std::string& cs = p.consumer_source;
  ProducerIndex pi = compose ? producer_index(ks) : ProducerIndex{};
  std::vector<py::Edit> edits;
  // The producer's parameter for the buffer is bound to the consumer's output in the fused launch.
  for (const py::Node* st : stores)
    edits.push_back(
        {st->begin.offset, st->end.offset, fold(pm, st, *c, held, others, digit_exprs, pp, buf_type, cs, pi)});

  std::string name = fused_name(kp, kc);
  std::string source = py::apply_edits(p.producer_source, std::move(edits));
  source = std::regex_replace(source, std::regex("\\b" + kp.name + "\\b"), name);
  if (kp.entry != kp.name)
    source = std::regex_replace(source, std::regex("\\bdef " + kp.entry + "\\("), "def " + name + "(");
  stitch::RegionEdit e;
  e.launches = {p.producer, p.consumer};
  e.internal = {p.buffer};
  e.kernel = name;
  e.source = source;
  e.args = args_with(kp, lp, pp, arg_of(lc, out_param));
  return e;
}

}  // namespace

std::optional<stitch::RegionEdit> epilogue(const Pair& p, std::string* why) { return build(p, why, true); }

std::optional<stitch::RegionEdit> epilogue_digits(const Pair& p, std::string* why) { return build(p, why, false); }

std::vector<std::pair<std::string, stitch::RegionEdit>> epilogue_variants(const Pair& p,
                                                                          const stitch::RegionEdit& digits) {
  std::string why;
  auto composed = epilogue(p, &why);
  if (!composed || composed->source == digits.source) return {};
  return {{"its address over the producer's names", std::move(*composed)}};
}

}  // namespace kopt::agents::fusion
