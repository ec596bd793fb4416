// Check 7, stores: the candidate writes memory only through pointers the original
// writes. Every tl.store / tl.atomic_* / descriptor `.store` (and the triton_helpers
// functions that write scratch space) must write through an address derived from an
// entry parameter the original also writes (computed the same way on the original,
// plus its mutated_arg_names). Writing an input-only buffer would corrupt the model's
// inputs or weights where G2 might not look; a write whose base cannot be traced is
// rejected too, conservatively. Two laundering routes are closed as well: a pointer
// may not be stored as data, and store functions may only be called directly.
// Raw PTX (tl.inline_asm_elementwise) can write anywhere: only an asm call the
// original itself contains, character for character, is allowed.
#include <fmt/format.h>

#include "verify/static/pointer_roots.h"

namespace kopt::verify {

namespace {

std::set<std::string> pointer_params(const ir::Kernel& k) {
  std::set<std::string> out;
  for (const ir::KernelParam& p : k.signature)
    if (p.dtype.starts_with("*") || (p.dtype.empty() && !p.is_constexpr)) out.insert(p.name);
  return out;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "`" : ", `") + x + "`";
  return out.empty() ? "nothing" : out;
}

}  // namespace

Finding check_stores(const StaticInput& in) {
  const std::set<std::string> pointers = pointer_params(in.original);
  PointerRoots orig(*in.original_parsed.module, in.original.entry, pointers);
  std::set<std::string> written(in.original.mutated_args.begin(), in.original.mutated_args.end());
  std::set<std::string> original_asm;
  for (const Write& w : orig.writes()) {
    Roots r = orig.roots(w.function, w.pointer);
    written.insert(r.params.begin(), r.params.end());
  }
  for (const py::Node* a : orig.inline_asm()) original_asm.emplace(in.original_parsed.module->text(a));

  PointerRoots cand(*in.candidate.module, in.original.entry, pointers);
  Problems p;
  for (const Write& w : cand.writes()) {
    Roots r = cand.roots(w.function, w.pointer);
    // A write inside a helper is traced through the helper's call sites.
    std::string op = w.function->ident("name") == in.original.entry
                         ? w.op
                         : fmt::format("{} (in helper `{}`)", w.op, w.function->ident("name"));
    std::set<std::string> bad;
    for (const std::string& x : r.params)
      if (!written.count(x)) bad.insert(x);
    if (!w.pointer)
      p.add(w.call, fmt::format("{} without a pointer argument", op));
    else if (!r.unknown.empty())
      p.add(w.pointer, fmt::format("{}: cannot tell which parameter this pointer comes from ({}); conservatively "
                                   "rejected",
                                   op, r.unknown));
    else if (r.params.empty())
      p.add(w.pointer, fmt::format("{}: cannot tell which parameter this pointer comes from; write through "
                                   "`param + offsets`, tl.make_block_ptr(base=param, ...) or a local assigned from "
                                   "those (the original writes {})",
                                   op, join(written)));
    else if (!bad.empty())
      p.add(w.pointer, fmt::format("{} writes through {}, which the original only reads; the original writes {}",
                                   op, join(bad), join(written)));
    for (const py::Node* v : w.values) {
      Roots vr = cand.roots(w.function, v);
      if (!vr.params.empty())
        p.add(v, fmt::format("{} stores a value derived from pointer {}: pointers may not be written to memory",
                             op, join(vr.params)));
    }
  }
  for (const auto& [fn, cmp] : cand.compares()) {
    Roots r = cand.roots(fn, cmp);
    if (!r.params.empty())
      p.add(cmp, fmt::format("compares addresses ({}): control flow on an address can steer one buffer's offsets "
                             "by another's; compare indices, not pointers",
                             join(r.params)));
  }
  for (const py::Node* h : cand.hidden_writers())
    p.add(h, fmt::format("`{}` is referenced without being called: store and atomic functions may only be called "
                         "directly, so every write can be checked",
                         in.candidate.module->text(h)));
  for (const py::Node* a : cand.inline_asm())
    if (!original_asm.count(std::string(in.candidate.module->text(a))))
      p.add(a, "tl.inline_asm_elementwise can write anywhere; only asm the original itself contains is allowed");
  return p.finding("stores", fmt::format("{} write(s), all through pointers the original writes ({})",
                                         cand.writes().size(), join(written)));
}

}  // namespace kopt::verify
