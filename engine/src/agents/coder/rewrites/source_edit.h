// What the source rewrites share (rewrites.cpp, single_pass.cpp, softmax_folds.cpp, ...): parsing a
// kernel and recognizing `tl.<fn>` calls and names in its syntax tree. Walking the tree and splicing
// edits into the text are py::walk (artifact/pyparse/visit.h) and py::apply_edits (edit.h).
#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/ir.h"
#include "artifact/literal.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites::detail {

inline bool is_name(const py::Node* n, std::string_view id) { return n && n->is("Name") && n->ident("id") == id; }

// `tl.<attr>` (an Attribute on the name tl).
inline bool is_tl(const py::Node* n, std::string_view attr) {
  if (!n || !n->is("Attribute") || n->ident("attr") != attr) return false;
  const py::Node* v = n->child("value");
  return v && v->is("Name") && v->ident("id") == "tl";
}

// `tl.<fn>(...)`: the IR's own test.
using ir::is_tl_call;

// The parsed kernel, or nothing with the parser's message.
inline std::optional<ir::KernelSource> parse(const std::string& source, const std::string& name, std::string* why) {
  try {
    return ir::parse_kernel_source(source, name, name);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

// The source text of `n`.
inline std::string text_of(const std::string& source, const py::Node* n) {
  return source.substr(n->begin.offset, n->end.offset - n->begin.offset);
}

// The `name = value` statements of the names bound exactly once in `entry` (a name assigned twice,
// or also bound by a loop, is not one value).
inline std::map<std::string, const py::Node*> bound_once(const py::Node* entry) {
  std::map<std::string, int> stores;
  std::map<std::string, const py::Node*> def;
  py::walk(entry, [&](const py::Node* n) {
    if (n->is("Name") && n->ident("ctx") == "Store") ++stores[std::string(n->ident("id"))];
    if (n->is("Assign") && n->list("targets").size() == 1 && n->list("targets")[0]->is("Name"))
      def[std::string(n->list("targets")[0]->ident("id"))] = n;
  });
  for (auto it = def.begin(); it != def.end();) it = stores[it->first] == 1 ? std::next(it) : def.erase(it);
  return def;
}

// The mask of a `tl.load` (its second argument or `mask=`) or `tl.store` (third), or null.
inline const py::Node* access_mask(const py::Node* call) {
  size_t at = is_tl_call(call, "store") ? 2 : 1;
  const py::Node* mask = call->list("args").size() > at ? call->list("args")[at] : nullptr;
  for (const py::Node* kw : call->list("keywords"))
    if (kw->ident("arg") == "mask") mask = kw->child("value");
  return mask;
}

// The terms of an `a & b & ...` mask, in order.
inline void and_terms(const py::Node* e, std::vector<const py::Node*>& out) {
  if (e->is("BinOp") && e->ident("op") == "BitAnd") {
    and_terms(e->child("left"), out);
    and_terms(e->child("right"), out);
  } else {
    out.push_back(e);
  }
}

inline void say(std::string* why, std::string text) {
  if (why) *why = std::move(text);
}

// Occurrences of `w` as a whole word in `s` (the text rewrites' check that a name has no use besides theirs).
inline size_t count_word(const std::string& s, const std::string& w) {
  std::regex re("\\b" + w + "\\b");
  return static_cast<size_t>(std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator()));
}

}  // namespace kopt::agents::rewrites::detail
