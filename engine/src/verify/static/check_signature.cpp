// Check 3, signature: the entry's parameter list equals the original's exactly —
// names, order, kinds (positional, *args, keyword-only, **kwargs), annotations
// (which parameters are `tl.constexpr`) and defaults. The launch site in the module
// binds arguments by position and the autotuner passes constexprs by name, so any
// difference would feed the wrong buffers to the kernel while the module still runs.
// Annotations and defaults are also evaluated on the host when the module is
// imported, which is one more reason they must stay as Inductor wrote them.
#include <fmt/format.h>

#include "verify/static/static_util.h"

namespace kopt::verify {

namespace {

struct Param {
  std::string kind;  // "positional", "*args", "keyword-only", "**kwargs"
  std::string name, annotation, default_value;
  const py::Node* node = nullptr;
};

// Source text without whitespace outside string literals, so that `x : tl.constexpr`
// and `x: tl.constexpr` compare equal.
std::string normalized(const py::Module& m, const py::Node* n) {
  if (!n) return "";
  std::string out;
  char quote = 0;
  for (char c : m.text(n)) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\') {
      continue;
    }
    out += c;
  }
  return out;
}

std::vector<Param> params_of(const py::Module& m, const py::Node* fn) {
  std::vector<Param> out;
  const py::Node* a = fn->child("args");
  if (!a) return out;
  std::vector<const py::Node*> positional(a->list("posonlyargs").begin(), a->list("posonlyargs").end());
  positional.insert(positional.end(), a->list("args").begin(), a->list("args").end());
  const auto& defaults = a->list("defaults");
  size_t first_default = positional.size() - std::min(positional.size(), defaults.size());
  for (size_t i = 0; i < positional.size(); ++i) {
    const py::Node* d = i >= first_default ? defaults[i - first_default] : nullptr;
    out.push_back({"positional", std::string(positional[i]->ident("arg")),
                   normalized(m, positional[i]->child("annotation")), normalized(m, d), positional[i]});
  }
  if (const py::Node* v = a->child("vararg"))
    out.push_back({"*args", std::string(v->ident("arg")), normalized(m, v->child("annotation")), "", v});
  const auto& kwonly = a->list("kwonlyargs");
  const auto& kwdefaults = a->list("kw_defaults");
  for (size_t i = 0; i < kwonly.size(); ++i)
    out.push_back({"keyword-only", std::string(kwonly[i]->ident("arg")), normalized(m, kwonly[i]->child("annotation")),
                   normalized(m, i < kwdefaults.size() ? kwdefaults[i] : nullptr), kwonly[i]});
  if (const py::Node* k = a->child("kwarg"))
    out.push_back({"**kwargs", std::string(k->ident("arg")), normalized(m, k->child("annotation")), "", k});
  return out;
}

std::string describe(const Param& p) {
  std::string s = p.kind == "positional" || p.kind == "keyword-only" ? p.name : p.kind + " " + p.name;
  if (!p.annotation.empty()) s += ": " + p.annotation;
  if (!p.default_value.empty()) s += " = " + p.default_value;
  return "`" + s + "`";
}

// The function Python would bind to `name` (the last definition of it).
const py::Node* find_def(const py::Node* module, const std::string& name) {
  const py::Node* found = nullptr;
  for (const py::Node* st : module->list("body"))
    if (st->is("FunctionDef") && st->ident("name") == name) found = st;
  return found;
}

}  // namespace

Finding check_signature(const StaticInput& in) {
  Problems p;
  const py::Node* orig = in.original_parsed.entry;
  const py::Node* cand = find_def(in.candidate.module->root(), in.original.entry);
  if (!orig) {
    p.add(fmt::format("line 1:1: internal: the original kernel `{}` has no entry function", in.original.name));
    return p.finding("signature", "");
  }
  if (!cand) {
    p.add(fmt::format("line 1:1: no function `{}` whose parameters could be compared with the original's",
                      in.original.entry));
    return p.finding("signature", "");
  }
  std::vector<Param> want = params_of(*in.original_parsed.module, orig);
  std::vector<Param> got = params_of(*in.candidate.module, cand);
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    if (i >= got.size()) {
      p.add(cand, fmt::format("parameter {} {} of the original is missing", i + 1, describe(want[i])));
    } else if (i >= want.size()) {
      p.add(got[i].node, fmt::format("parameter {} {} is not in the original", i + 1, describe(got[i])));
    } else if (want[i].kind != got[i].kind || want[i].name != got[i].name || want[i].annotation != got[i].annotation ||
               want[i].default_value != got[i].default_value) {
      p.add(got[i].node, fmt::format("parameter {} is {}, the original's is {}", i + 1, describe(got[i]),
                                     describe(want[i])));
    }
  }
  std::string ret_want = normalized(*in.original_parsed.module, orig->child("returns"));
  std::string ret_got = normalized(*in.candidate.module, cand->child("returns"));
  if (ret_want != ret_got)
    p.add(cand, fmt::format("return annotation `{}` differs from the original's `{}`", ret_got, ret_want));
  if (!p.empty())
    p.add(fmt::format("the entry's parameters must stay exactly ({}) so the launch site is unchanged",
                      [&] {
                        std::string s;
                        for (const Param& w : want) s += (s.empty() ? "" : ", ") + describe(w);
                        return s;
                      }()));
  return p.finding("signature", fmt::format("`{}` keeps the original's {} parameters", in.original.entry, want.size()));
}

}  // namespace kopt::verify
