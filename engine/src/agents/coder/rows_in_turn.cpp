#include "agents/coder/rows_in_turn.h"

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/source_edit.h"
#include "agents/coder/x_index.h"

namespace kopt::agents::rewrites {

using namespace detail;
using py::Node;

namespace {

// The names a statement assigns: `a = ...`, `a, b = ...`; empty for anything else.
std::vector<std::string> targets(const Node* s) {
  std::vector<std::string> out;
  if (!s->is("Assign")) return out;
  for (const Node* t : s->list("targets")) {
    if (t->is("Name")) out.emplace_back(t->ident("id"));
    else if (t->is("Tuple"))
      for (const Node* e : t->list("elts"))
        if (e->is("Name")) out.emplace_back(e->ident("id"));
        else return {};
    else return {};
  }
  return out;
}

// Every name a statement reads (for an assignment: its value only).
std::set<std::string> reads(const Node* s) {
  std::set<std::string> out;
  const Node* from = s->is("Assign") ? s->child("value") : s;
  walk(from, [&](const Node* n) {
    if (n->is("Name")) out.emplace(n->ident("id"));
  });
  return out;
}

// The pointer parameter a load or store addresses: the first Name in its address expression.
std::string base_pointer(const Node* call) {
  const auto& args = call->list("args");
  if (args.empty()) return "";
  std::string first;
  walk(args[0], [&](const Node* n) {
    if (first.empty() && n->is("Name")) first = std::string(n->ident("id"));
  });
  return first;
}

// Replace the whole word XBLOCK by XB in `text`.
std::string tile_rows(const std::string& text) {
  static const std::regex w(R"(\bXBLOCK\b)");
  return std::regex_replace(text, w, "XB");
}

// `text` (a statement, possibly over several lines) indented by `extra` more spaces.
std::string indent_more(const std::string& text, const std::string& extra) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += extra;
  }
  return out;
}

}  // namespace

std::optional<RowsInTurn> rows_in_turn(const std::string& source, const std::string& name, int64_t xb, int stages,
                                       std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, "rows in turn: " + reason);
    return std::optional<RowsInTurn>{};
  };
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  const Node* entry = ks->entry;
  auto x = x_index(source, entry, "rows in turn", why);
  if (!x) return std::nullopt;
  if (x->mask_is_full && x->numel % xb != 0) return no(fmt::format("xnumel {} is not a multiple of {} rows", x->numel, xb));
  const auto& body = entry->list("body");
  size_t first = body.size();
  for (size_t i = 0; i < body.size(); ++i)
    if (text_of(source, body[i]) == "xoffset = tl.program_id(0) * XBLOCK") first = i;
  if (first == body.size()) return no("no `xoffset = tl.program_id(0) * XBLOCK`");
  // The pointers the kernel stores to: a load from one of them stays in the loop (a tile's store
  // may write what the next tile's hoisted load would have read).
  std::set<std::string> stored;
  walk(entry, [&](const Node* n) {
    if (is_tl_call(n, "store") || is_tl_call(n, "atomic_add")) stored.insert(base_pointer(n));
  });
  // How often each name is assigned, counting a repeat of the very same statement (the single
  // pass's second `r0_index = r0_offset + r0_base`) once: it assigns the value the name already has.
  std::map<std::string, int> assigned;
  std::map<std::string, std::string> first_text;
  std::set<const Node*> repeats;
  for (size_t i = first + 1; i < body.size(); ++i) {
    const Node* s = body[i];
    if (!s->is("Assign") && !s->is("Expr")) return no(fmt::format("a `{}` statement in the row's body", s->type));
    if (s->is("Assign") && targets(s).empty()) return no("an assignment to something other than names");
    std::vector<std::string> t = targets(s);
    std::string st = text_of(source, s);
    if (t.size() == 1 && first_text.count(t[0]) && first_text[t[0]] == st) {
      repeats.insert(s);
      continue;
    }
    for (const std::string& n : t) ++assigned[n], first_text.emplace(n, st);
  }
  // A repeat is a no-op only while what it reads is unchanged: each read name assigned once.
  for (const Node* s : repeats)
    for (const std::string& n : reads(s))
      if (assigned.count(n) && assigned[n] > 1) return no(fmt::format("`{}` is reassigned between repeats", n));
  std::set<std::string> in_loop = {"xoffset"}, seen, hoisted_names;
  std::vector<const Node*> hoisted, looped;
  int hoisted_loads = 0;
  for (size_t i = first + 1; i < body.size(); ++i) {
    const Node* s = body[i];
    if (repeats.count(s)) {
      if (!hoisted_names.count(targets(s)[0])) looped.push_back(s);
      continue;
    }
    std::set<std::string> r = reads(s);
    for (const std::string& n : r)
      if (assigned.count(n) && !seen.count(n)) return no(fmt::format("`{}` is read before the row assigns it", n));
    std::vector<std::string> t = targets(s);
    bool depends = false, loads_stored = false;
    for (const std::string& n : r) depends = depends || in_loop.count(n);
    int loads = 0;
    walk(s, [&](const Node* n) {
      if (!is_tl_call(n, "load")) return;
      ++loads;
      loads_stored = loads_stored || stored.count(base_pointer(n));
    });
    bool once = !t.empty();
    for (const std::string& n : t) once = once && assigned[n] == 1;
    if (s->is("Assign") && once && !depends && !loads_stored) {
      hoisted.push_back(s);
      hoisted_loads += loads;
      hoisted_names.insert(t.begin(), t.end());
    } else {
      looped.push_back(s);
      for (const std::string& n : t) in_loop.insert(n);
    }
    for (const std::string& n : t) seen.insert(n);
  }
  if (hoisted_loads == 0) return no("nothing the rows share is loaded");
  const std::string ind(body[first]->begin.col, ' ');
  std::string text = fmt::format("XB: tl.constexpr = {}\n{}tl.static_assert(XBLOCK % XB == 0)\n", xb, ind);
  for (const Node* s : hoisted) text += ind + tile_rows(text_of(source, s)) + "\n";
  // The program's tiles: XBLOCK // XB, fewer for the last program (a partial tile's rows are masked).
  text += fmt::format("{}for _kopt_t in tl.range(0, (tl.minimum(xnumel - tl.program_id(0) * XBLOCK, XBLOCK) + XB - 1) // XB{}):\n",
                      ind, stages > 1 ? fmt::format(", num_stages={}", stages) : "");
  text += fmt::format("{0}    xoffset = tl.program_id(0) * XBLOCK + _kopt_t * XB\n", ind);
  for (const Node* s : looped) text += ind + "    " + indent_more(tile_rows(text_of(source, s)), "    ") + "\n";
  text.pop_back();
  RowsInTurn out;
  out.source = apply(source, {{body[first]->begin.offset, body.back()->end.offset, text}});
  out.hoisted = static_cast<int>(hoisted.size());
  out.hoisted_loads = hoisted_loads;
  return out;
}

}  // namespace kopt::agents::rewrites
