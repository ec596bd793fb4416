#include "agents/coder/fusion/epilogue.h"

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "agents/coder/fusion/pointwise.h"
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

// One store of the producer, replaced: the address it wrote in the buffer, the consumer's digits read
// back from it, the consumer's loads (the buffer's value is what the producer stored; any other buffer is
// loaded through the producer's own parameter bound to it, at the consumer's index), its elementwise
// statements on them, a store at the consumer's index.
std::string fold(const py::Module& pm, const py::Node* st, const Pointwise& c, size_t held_load,
                 const std::map<std::string, std::string>& other_params, const std::vector<std::string>& digit_exprs,
                 const std::string& out, const std::string& buf_type, const std::string& cs) {
  auto ps = store_of(st->child("value"));
  std::string ind(st->begin.col, ' ');
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
  return text + fmt::format("{}tl.store({} + ({}), {}{})", ind, out,
                            render(*digit_affine(c, c.store.index), c.digits), value, mask);
}

}  // namespace

std::optional<stitch::RegionEdit> epilogue(const Pair& p, std::string* why) {
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
  std::vector<py::Edit> edits;
  // The producer's parameter for the buffer is bound to the consumer's output in the fused launch.
  for (const py::Node* st : stores)
    edits.push_back({st->begin.offset, st->end.offset, fold(pm, st, *c, held, others, digit_exprs, pp, buf_type, cs)});

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

}  // namespace kopt::agents::fusion
