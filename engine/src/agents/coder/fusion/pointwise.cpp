#include "agents/coder/fusion/pointwise.h"

#include <algorithm>
#include <functional>
#include <regex>

#include <fmt/format.h>

#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::fusion {

namespace {

std::string callee(const py::Module& m, const py::Node* call) { return std::string(m.text(call->child("func"))); }

}  // namespace

std::optional<Pointwise> read_pointwise(const ir::Kernel& k, const std::string& source, std::string* why,
                                        bool tile, bool tiled) {
  auto no = [&](std::string w) -> std::optional<Pointwise> { return *why = std::move(w), std::nullopt; };
  if (k.kind != "pointwise") return no(fmt::format("{} is a {} kernel, not pointwise", k.name, k.kind));
  for (const ir::KernelParam& p : k.signature)
    if (p.is_constexpr && p.name != "XBLOCK" && !(tiled && (p.name == "YBLOCK" || p.name == "ZBLOCK")))
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
  // The same per axis of a tiled kernel (a y offset over two grid axes: `(tl.program_id(1) + tl.program_id(2) *
  // tl.num_programs(1)) * YBLOCK`).
  static const std::vector<std::regex> axis_structure = [] {
    std::vector<std::regex> out;
    for (char a : std::string("xyz")) {
      char A = static_cast<char>(a - 'a' + 'A');
      out.emplace_back(fmt::format(
          R"(^{0}offset = [\w\s().*+]*\b{1}BLOCK|{0}index = {0}offset \+ tl\.arange\(0, {1}BLOCK\)(\[[:, None]*\])?)"
          R"(|{0}mask = {0}index < {0}numel|{0}mask = tl\.full\(\[[A-Z, 1]*\], True, tl\.int1\)(\[[:, None]*\])?$)",
          a, A));
    }
    return out;
  }();
  auto tiled_structure = [&](const std::string& text) {
    return std::any_of(axis_structure.begin(), axis_structure.end(),
                       [&](const std::regex& r) { return std::regex_match(text, r); });
  };
  static const std::regex numel(R"(^([xyz])numel = (\d+)$)");
  const std::string axes = tiled ? "xyz" : "x";
  std::map<char, int64_t> numels;
  std::map<char, std::vector<Digit>> digits;
  std::map<char, std::vector<std::string>> wholes;
  for (const py::Node* st : pw.ks.entry->list("body")) {
    std::string text(m.text(st));
    std::smatch sm;
    if (std::regex_match(text, sm, numel)) {
      if (axes.find(sm.str(1)[0]) == std::string::npos) return no(fmt::format("{} has a second grid axis", k.name));
      numels[sm.str(1)[0]] = std::stoll(sm[2]);
      continue;
    }
    if (tiled ? tiled_structure(text) : std::regex_match(text, structure)) continue;
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
    bool index_stmt = false;
    for (char a : axes) {
      std::string index = std::string(1, a) + "index";
      if (v->is("Name") && v->ident("id") == index) {
        wholes[a].push_back(name), pw.whole.insert(name);
      } else if (auto d = digit(name, v, index)) {
        digits[a].push_back(*d), pw.locals.insert(name);
      } else {
        continue;
      }
      pw.index_stmts.push_back(st), index_stmt = true;
      break;
    }
    if (index_stmt) continue;
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
      if (n->is("Name"))
        for (char a : std::string("xyz"))
          for (const char* w : {"index", "offset", "mask"})
            if (n->ident("id") == std::string(1, a) + w) bad = std::string(n->ident("id"));
    });
    if (!bad.empty()) return no(fmt::format("{}: `{}` uses {}, not elementwise", k.name, text, bad));
    pw.body.push_back(st);
  }
  if (numels['x'] <= 0) return no(fmt::format("{} has no constant xnumel", k.name));
  if (!pw.store_stmt) return no(fmt::format("{} stores nothing", k.name));
  // Axis by axis (x innermost), digits of the virtual index: an axis's place values times what the axes
  // inside it span.
  int64_t place = 1;
  for (char a : axes) {
    if (!numels.count(a)) continue;
    if (numels[a] <= 0) return no(fmt::format("{} has no constant {}numel", k.name, a));
    std::vector<Digit>& ds = digits[a];
    std::vector<std::string>& ws = wholes[a];
    if (ds.empty() && !ws.empty()) {  // `x0 = xindex`: one digit, the index itself
      ds.push_back({ws.front(), 1, numels[a]});
      pw.locals.insert(ws.front()), pw.whole.erase(ws.front());
      ws.erase(ws.begin());
    }
    if (tile && !complete(ds, numels[a], why)) return std::nullopt;
    std::vector<std::pair<std::string, int64_t>> terms;
    for (Digit d : ds) {
      terms.emplace_back(d.name, d.base);
      d.base *= place;
      pw.digits.push_back(d);
    }
    for (const std::string& w : ws) pw.whole_terms[w] = terms;
    pw.whole_terms[std::string(1, a) + "index"] = terms;
    place *= numels[a];
  }
  pw.xnumel = place;
  std::sort(pw.digits.begin(), pw.digits.end(), [](const Digit& a, const Digit& b) { return a.base < b.base; });
  // Masks: none, or the axes' own (`xmask`, `xmask & ymask`).
  std::function<bool(const py::Node*)> axis_mask = [&](const py::Node* n) {
    if (plain_mask(n)) return true;
    if (tiled && n->is("Name")) return n->ident("id") == "ymask" || n->ident("id") == "zmask";
    return tiled && n->is("BinOp") && n->ident("op") == "BitAnd" && axis_mask(n->child("left")) &&
           axis_mask(n->child("right"));
  };
  for (const Pointwise::Load& l : pw.loads)
    if (!axis_mask(l.at.mask)) return no(fmt::format("{}: the load of {} has its own mask", k.name, l.at.ptr));
  if (!axis_mask(pw.store.mask)) return no(fmt::format("{}: the store has its own mask", k.name));
  return pw;
}

std::optional<Affine> digit_affine(const Pointwise& p, const py::Node* index) {
  auto a = affine(index);
  if (!a) return std::nullopt;
  Affine out;
  out.c = a->c;
  for (const auto& [n, v] : a->coef) {
    if (auto w = p.whole_terms.find(n); w != p.whole_terms.end()) {
      for (const auto& [d, place] : w->second) out.coef[d] += v * place;
    } else {
      out.coef[n] += v;
    }
  }
  for (auto it = out.coef.begin(); it != out.coef.end();) it = it->second == 0 ? out.coef.erase(it) : std::next(it);
  return out;
}

}  // namespace kopt::agents::fusion
