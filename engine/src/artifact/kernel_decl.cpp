// Reading kernel declarations: `var = async_compile.triton('name', '''src''', ...)`
// at module level, the comment block Inductor writes above each (ATen ops, source
// nodes), and the kernel source itself (entry function, heuristics decorator,
// typed signature).
#include <algorithm>
#include <set>

#include "artifact/ir.h"
#include "artifact/ir_internal.h"
#include "artifact/literal.h"
#include "util/error.h"

namespace kopt::ir {

namespace {

// Heuristics decorators Inductor emits (torch/_inductor/runtime/triton_heuristics.py).
const std::set<std::string, std::less<>> kKnownKinds = {
    "pointwise", "reduction", "persistent_reduction", "template", "split_scan", "foreach",
    "user_autotune", "fixed_config", "cooperative_reduction", "combo_kernel"};

bool is_triton_jit(const py::Node* dec) {
  std::string n = dotted_name(dec->is("Call") ? dec->child("func") : dec);
  return n == "triton.jit" || n == "jit";
}

// Names inside the bracket list that follows `label` on a comment line:
// "Original ATen: [aten._softmax, aten.exp]" -> {"aten._softmax", "aten.exp"}.
std::vector<std::string> bracket_list_after(std::string_view text, std::string_view label) {
  std::vector<std::string> out;
  size_t at = text.rfind(label);
  if (at == std::string_view::npos) return out;
  size_t open = text.find('[', at), close = text.find(']', at);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return out;
  std::string_view inner = text.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string_view item = inner.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string_view leading_trivia(const py::Module& m, const py::Node* n) {
  const auto& toks = m.tokens();
  auto it = std::lower_bound(toks.begin(), toks.end(), n->begin.offset,
                             [](const py::Token& t, uint32_t off) { return t.begin.offset < off; });
  return it == toks.end() ? std::string_view() : it->trivia;
}

KernelSource parse_kernel_source(const std::string& source, const std::string& name, const std::string& where) {
  KernelSource ks;
  try {
    ks.module = py::parse(source, where);
  } catch (const py::ParseError& e) {
    throw UserError(fmt::format("{}: kernel `{}` does not parse: line {} of its source: {}", where, name, e.line,
                                e.message));
  }
  const py::Node* heuristic_fn = nullptr;
  for (const py::Node* st : ks.module->root()->list("body")) {
    if (!st->is("FunctionDef")) continue;
    bool jit = false;
    const py::Node* heur = nullptr;
    for (const py::Node* d : st->list("decorator_list")) {
      if (is_triton_jit(d)) jit = true;
      std::string dn = dotted_name(d->is("Call") ? d->child("func") : d);
      if (dn.rfind("triton_heuristics.", 0) == 0) heur = d;
    }
    if (!jit) continue;
    ks.jit_functions.push_back(st);
    if (st->ident("name") == name) ks.entry = st;
    if (heur && !heuristic_fn) heuristic_fn = st, ks.heuristics = heur;
  }
  if (!ks.entry) ks.entry = heuristic_fn;
  if (!ks.entry && ks.jit_functions.size() == 1) ks.entry = ks.jit_functions.front();
  if (ks.entry && !ks.heuristics) {
    for (const py::Node* d : ks.entry->list("decorator_list"))
      if (dotted_name(d->is("Call") ? d->child("func") : d).rfind("triton_heuristics.", 0) == 0) ks.heuristics = d;
  }
  return ks;
}

// Fills a Kernel from its declaration statement `var = async_compile.triton(name, src, ...)`.
Kernel read_kernel_decl(const py::Module& m, const py::Node* assign, const py::Node* call) {
  Kernel k;
  k.var = std::string(assign->list("targets")[0]->ident("id"));
  const auto& args = call->list("args");
  auto bad = [&](const py::Node* at, const std::string& what) {
    return located_error(m.filename(), at->begin.line, at->begin.col, what);
  };
  if (args.size() < 2 || !args[0]->is("Constant") || args[0]->const_kind != py::ConstKind::Str ||
      !args[1]->is("Constant") || args[1]->const_kind != py::ConstKind::Str)
    throw bad(call, "expected async_compile.triton('kernel_name', '''source''', ...)");
  k.name = args[0]->value;
  k.source = args[1]->value;
  k.decl = {assign->begin, assign->end};
  k.literal = {args[1]->begin, args[1]->end};

  std::string_view comments = leading_trivia(m, assign);
  k.aten_ops = bracket_list_after(comments, "Original ATen:");
  k.source_nodes = bracket_list_after(comments, "Topologically Sorted Source Nodes:");
  k.comment = std::string(comments);

  KernelSource ks = parse_kernel_source(k.source, k.name, fmt::format("{}:{}", m.filename(), args[1]->begin.line));
  if (!ks.entry) throw bad(args[1], fmt::format("kernel `{}` has no @triton.jit function", k.name));
  k.entry = std::string(ks.entry->ident("name"));
  for (const py::Node* f : ks.jit_functions)
    if (f != ks.entry) k.helpers.emplace_back(f->ident("name"));

  k.kind = "jit";  // a bare @triton.jit (user kernel without autotuning)
  if (ks.heuristics) {
    std::string dn = dotted_name(ks.heuristics->is("Call") ? ks.heuristics->child("func") : ks.heuristics);
    std::string kind = dn.substr(std::string("triton_heuristics.").size());
    if (!kKnownKinds.count(kind)) {
      const py::Node* d = ks.heuristics;
      uint32_t line = args[1]->begin.line + d->begin.line - 1;
      throw located_error(m.filename(), line, d->begin.col,
                          fmt::format("unknown heuristics decorator `{}`; expected triton_heuristics.<one of: "
                                      "pointwise, reduction, persistent_reduction, template, split_scan, foreach, "
                                      "user_autotune, fixed_config, cooperative_reduction, combo_kernel>",
                                      dn));
    }
    k.kind = kind;
    if (ks.heuristics->is("Call")) {
      const py::Module& km = *ks.module;
      for (const py::Node* kw : ks.heuristics->list("keywords")) {
        std::string key(kw->ident("arg"));
        json v = literal_to_json(km, kw->child("value"));
        if (key == "size_hints") k.size_hints = v;
        else if (key == "triton_meta") k.triton_meta = v;
        else if (key == "inductor_meta") k.inductor_meta = v;
        else if (!key.empty()) k.decorator_args[key] = v;
      }
    }
  }

  const json sig = k.triton_meta.is_object() ? k.triton_meta.value("signature", json::object()) : json::object();
  const json consts = k.triton_meta.is_object() ? k.triton_meta.value("constants", json::object()) : json::object();
  const py::Node* params = ks.entry->child("args");
  auto add_param = [&](const py::Node* a) {
    KernelParam p;
    p.name = std::string(a->ident("arg"));
    const py::Node* ann = a->child("annotation");
    if (sig.is_object() && sig.contains(p.name) && sig[p.name].is_string()) p.dtype = sig[p.name].get<std::string>();
    p.is_constexpr = ann && (dotted_name(ann) == "tl.constexpr" || dotted_name(ann) == "triton.language.constexpr");
    if (consts.contains(p.name)) p.constant = consts[p.name];
    if (p.dtype.empty() && p.is_constexpr) p.dtype = "constexpr";
    k.signature.push_back(std::move(p));
  };
  if (params) {
    for (const py::Node* a : params->list("posonlyargs")) add_param(a);
    for (const py::Node* a : params->list("args")) add_param(a);
  }
  if (k.inductor_meta.is_object() && k.inductor_meta.contains("mutated_arg_names"))
    for (const auto& v : k.inductor_meta["mutated_arg_names"])
      if (v.is_string()) k.mutated_args.push_back(v.get<std::string>());
  return k;
}

}  // namespace kopt::ir
