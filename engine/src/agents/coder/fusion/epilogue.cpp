#include "agents/coder/fusion/epilogue.h"

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

// One store of the producer, replaced: the address it wrote in the buffer, the consumer's digits read
// back from it, the consumer's elementwise statements on the value, a store at the consumer's index.
std::string fold(const py::Module& pm, const py::Node* st, const Pointwise& c,
                 const std::vector<std::string>& digit_exprs, const std::string& pp, const std::string& buf_type,
                 const std::string& cs) {
  auto ps = store_of(st->child("value"));
  std::string ind(st->begin.col, ' ');
  std::string text = fmt::format("{}a = {}\n", kPrefix, pm.text(ps->index));
  std::string out_index;
  for (size_t i = 0; i < c.digits.size(); ++i) {
    text += fmt::format("{}{}{} = {}\n", ind, kPrefix, c.digits[i].name, digit_exprs[i]);
    out_index +=
        fmt::format("{}{} * {}{}", out_index.empty() ? "" : " + ", c.digits[i].base, kPrefix, c.digits[i].name);
  }
  // The buffer held the value converted to its type; the consumer loaded that.
  std::string held = fmt::format("({}).to({})", pm.text(ps->value), tl_dtype(buf_type));
  if (!c.loads[0].convert.empty()) held = fmt::format("{}.to({})", held, c.loads[0].convert);  // as the load did
  text += fmt::format("{}{}{} = {}\n", ind, kPrefix, c.loads[0].target, held);
  for (const py::Node* b : c.body) text += ind + prefixed(cs, b, c.locals, kPrefix) + "\n";
  std::string value = prefixed(cs, c.store.value, c.locals, kPrefix);
  std::string mask = ps->mask ? ", " + std::string(pm.text(ps->mask)) : "";
  return text + fmt::format("{}tl.store({} + ({}), {}{})", ind, pp, out_index, value, mask);
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
  auto c = read_pointwise(kc, p.consumer_source, &w);
  if (!c) return no("the consumer: " + w);
  if (c->loads.size() != 1 || c->loads[0].at.ptr != pc)
    return no(fmt::format("the consumer {} loads {} buffer(s) besides {}; only a consumer of the fused buffer alone "
                          "folds into the producer's store",
                          kc.name, c->loads.size() - (c->loads.size() && c->loads[0].at.ptr == pc ? 1 : 0), pc));
  auto store_index = digit_affine(*c, c->store.index);
  if (!store_index || !is_x_index(*store_index, c->digits))
    return no(fmt::format("the consumer {} does not store at its own x index", kc.name));
  int64_t numel = numel_of(*p.f, p.buffer);
  if (numel != c->xnumel)
    return no(fmt::format("the consumer reads {} elements, {} holds {}", c->xnumel, p.buffer, numel));
  auto load_index = digit_affine(*c, c->loads[0].at.index);
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
  for (const py::Node* st : stores)
    edits.push_back({st->begin.offset, st->end.offset, fold(pm, st, *c, digit_exprs, pp, buf_type, cs)});

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
