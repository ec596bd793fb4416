#include "agents/coder/fusion/pointwise.h"

#include <regex>

#include <fmt/format.h>

#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::fusion {

namespace {

std::string callee(const py::Module& m, const py::Node* call) { return std::string(m.text(call->child("func"))); }

}  // namespace

std::optional<Pointwise> read_pointwise(const ir::Kernel& k, const std::string& source, std::string* why,
                                        bool tile) {
  auto no = [&](std::string w) -> std::optional<Pointwise> { return *why = std::move(w), std::nullopt; };
  if (k.kind != "pointwise") return no(fmt::format("{} is a {} kernel, not pointwise", k.name, k.kind));
  for (const ir::KernelParam& p : k.signature)
    if (p.is_constexpr && p.name != "XBLOCK")
      return no(fmt::format("{} is tiled by {} besides XBLOCK", k.name, p.name));
  Pointwise pw;
  try {
    pw.ks = ir::parse_kernel_source(source, k.name, k.name);
  } catch (const std::exception& e) {
    return no(e.what());
  }
  const py::Module& m = *pw.ks.module;
  // Inductor's 1-D x index: what the fused kernel has of its own.
  static const std::regex structure(
      R"(^(xoffset = tl\.program_id\(0\) \* XBLOCK|xindex = xoffset \+ tl\.arange\(0, XBLOCK\)(\[:\])?)"
      R"(|xmask = xindex < xnumel|xmask = tl\.full\(\[XBLOCK\], True, tl\.int1\)(\[:\])?)$)");
  static const std::regex numel(R"(^xnumel = (\d+)$)");
  for (const py::Node* st : pw.ks.entry->list("body")) {
    std::string text(m.text(st));
    std::smatch sm;
    if (std::regex_match(text, sm, numel)) {
      pw.xnumel = std::stoll(sm[1]);
      continue;
    }
    if (std::regex_match(text, structure)) continue;
    if (st->is("Expr") && st->child("value")->is("Call")) {
      auto s = store_of(st->child("value"));
      if (!s) return no(fmt::format("{}: `{}` is not a store through `ptr + (index)`", k.name, text));
      if (pw.store_stmt) return no(fmt::format("{} stores more than once", k.name));
      pw.store_stmt = st, pw.store = *s;
      continue;
    }
    std::string name = assigned(st);
    if (name.empty()) return no(fmt::format("{}: `{}` is not a plain assignment", k.name, text));
    const py::Node* v = st->child("value");
    if (v->is("Name") && v->ident("id") == "xindex") {
      pw.whole.insert(name);
      pw.index_stmts.push_back(st);
      continue;
    }
    if (auto d = digit(name, v)) {
      pw.digits.push_back(*d);
      pw.locals.insert(name);
      pw.index_stmts.push_back(st);
      continue;
    }
    pw.locals.insert(name);
    if (auto l = load_of(v)) {
      pw.loads.push_back({st, name, *l, ""});
      continue;
    }
    // A half-precision buffer's load, converted to float32 where it is made.
    const py::Node* dtype = nullptr;
    if (auto l = load_of(ir::converted(v, &dtype))) {
      pw.loads.push_back({st, name, *l, std::string(m.text(dtype))});
      continue;
    }
    std::string bad;
    py::walk(v, [&](const py::Node* n) {
      if (n->is("Call") && not_elementwise(callee(m, n))) bad = callee(m, n);
      if (n->is("Name") && (n->ident("id") == "xindex" || n->ident("id") == "xoffset" || n->ident("id") == "xmask"))
        bad = std::string(n->ident("id"));
    });
    if (!bad.empty()) return no(fmt::format("{}: `{}` uses {}, not elementwise", k.name, text, bad));
    pw.body.push_back(st);
  }
  if (pw.xnumel <= 0) return no(fmt::format("{} has no constant xnumel", k.name));
  if (!pw.store_stmt) return no(fmt::format("{} stores nothing", k.name));
  if (pw.digits.empty() && !pw.whole.empty()) {  // `x0 = xindex`: one digit, the index itself
    pw.digits.push_back({*pw.whole.begin(), 1, pw.xnumel});
    pw.locals.insert(*pw.whole.begin());
    pw.whole.erase(pw.whole.begin());
  }
  if (tile && !complete(pw.digits, pw.xnumel, why)) return std::nullopt;
  for (const Pointwise::Load& l : pw.loads)
    if (!plain_mask(l.at.mask)) return no(fmt::format("{}: the load of {} has its own mask", k.name, l.at.ptr));
  if (!plain_mask(pw.store.mask)) return no(fmt::format("{}: the store has its own mask", k.name));
  return pw;
}

std::optional<Affine> digit_affine(const Pointwise& p, const py::Node* index) {
  auto a = affine(index);
  if (!a) return std::nullopt;
  Affine out;
  out.c = a->c;
  for (const auto& [n, v] : a->coef) {
    if (p.whole.count(n) || n == "xindex") {
      for (const Digit& d : p.digits) out.coef[d.name] += v * d.base;
    } else {
      out.coef[n] += v;
    }
  }
  for (auto it = out.coef.begin(); it != out.coef.end();) it = it->second == 0 ? out.coef.erase(it) : std::next(it);
  return out;
}

}  // namespace kopt::agents::fusion
