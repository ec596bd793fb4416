#include "agents/coder/fusion/split_loops.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kopt::agents::fusion {

using templates::split_args;

bool mentions(const std::string& text, const std::string& name) {
  std::vector<std::string> w = templates::words(text);
  return std::find(w.begin(), w.end(), name) != w.end();
}

std::string guarded_store(const std::string& text, const std::string& guard) {
  size_t open = text.find('('), close = text.rfind(')');
  std::vector<std::string> args = split_args(text.substr(open + 1, close - open - 1));
  if (args.size() < 3) args.push_back(guard);
  else if (args[2] == "None") args[2] = guard;  // Inductor's unmasked store
  else args[2] = fmt::format("({}) & ({})", args[2], guard);
  return fmt::format("tl.store({})", fmt::join(args, ", "));
}


std::optional<Loops> read_loops(const ir::Kernel& k, std::string* why) {
  auto no = [&](std::string w) -> std::optional<Loops> { return *why = std::move(w), std::nullopt; };
  auto lines = entry_body(k, why);
  if (!lines) return std::nullopt;
  static const std::regex header(R"(^for r0_offset in (tl\.)?range\(0, r0_numel, R0_BLOCK\):$)");
  Loops out;
  int stage = 0;  // 0 prologue, 1 loop1, 2 mid, 3 loop2, 4 tail
  for (const Line& l : *lines) {
    if (l.indent == 4 && (stage == 1 || stage == 3)) ++stage;
    if (l.indent == 4 && std::regex_match(l.text, header)) {
      if (stage != 0 && stage != 2) return no("more than two loops over the row");
      ++stage;
      continue;
    }
    if (l.indent == 4 && (l.text.rfind("for ", 0) == 0 || l.text.rfind("if ", 0) == 0 ||
                          l.text.rfind("while ", 0) == 0 || l.text.rfind("with ", 0) == 0))
      return no("a compound statement other than the two loops over the row: " + l.text);
    if (l.indent != 4 && stage != 1 && stage != 3) return no("unexpected indentation");
    std::vector<Line>* to[] = {&out.prologue, &out.loop1, &out.mid, &out.loop2, &out.tail};
    to[stage]->push_back(l);
  }
  if (stage < 2) return no("no statement after the loop over the row");

  static const std::regex xnumel(R"(^xnumel = (\d+)$)"), rnumel(R"(^r0_numel = (\d+)$)"),
      xoff(R"(^xoffset = tl\.program_id\(0\)(\.to\(tl\.int64\))? \* XBLOCK$)"),
      full(R"(^(\w+) = tl\.full\(\[XBLOCK, R0_BLOCK\], (.+), tl\.float32\)$)"),
      zeros(R"(^(\w+) = tl\.zeros\(\[XBLOCK, R0_BLOCK\], tl\.float32\)$)");
  bool has_xoffset = false, xindex_seen = false;
  for (size_t i = 0; i < out.prologue.size(); ++i) {
    const std::string& t = out.prologue[i].text;
    std::smatch m;
    if (std::regex_match(t, m, xnumel)) out.rows = std::stoll(m[1]);
    else if (std::regex_match(t, m, rnumel)) out.cols = std::stoll(m[1]);
    else if (std::regex_match(t, m, xoff)) has_xoffset = true, out.xoffset = i, out.wide = m[1].matched;
    else if (t.rfind("xindex = ", 0) == 0) xindex_seen = true;
    else if (std::regex_match(t, m, full) || std::regex_match(t, m, zeros)) {
      if (!xindex_seen) return no("an accumulator initialized before the row index");
      out.accs.push_back({m[1], m.size() > 2 && m[2].matched ? m[2].str() : "0.0", i, 0});
    } else if (t.find("[XBLOCK, R0_BLOCK]") != std::string::npos) {
      return no("an accumulator that is not float32: " + t);
    }
  }
  if (out.rows <= 0 || out.cols <= 0) return no("xnumel and r0_numel are not constants of the body (a dynamic shape)");
  if (!has_xoffset) return no("the row offset is not Inductor's `xoffset = tl.program_id(0) * XBLOCK`");
  if (out.accs.empty()) return no("the first loop carries no accumulator");
  auto any = [](const std::vector<Line>& ls, const std::string& s) {
    return std::any_of(ls.begin(), ls.end(), [&](const Line& l) { return l.text.find(s) != std::string::npos; });
  };
  for (const auto* part : {&out.prologue, &out.loop1, &out.mid, &out.loop2, &out.tail}) {
    size_t ids = 0;
    for (const Line& l : *part) ids += l.text.find("tl.program_id") != std::string::npos;
    if (ids > (part == &out.prologue ? 1u : 0u)) return no("a program id used beyond the row offset");
  }
  if (any(out.prologue, "tl.store") || any(out.loop1, "tl.store"))
    return no("a store before or in the statistics loop");
  if (any(out.loop1, "tl.atomic") || any(out.mid, "tl.atomic") || any(out.loop2, "tl.atomic"))
    return no("an atomic operation");
  if (stage >= 3 && !any(out.loop2, "tl.store")) return no("the second loop stores nothing");
  if (stage < 3 && !any(out.mid, "tl.store")) return no("nothing is stored after the loop");

  // The final statements: each accumulator reduced over dim 1 by one helper call, nothing else of them.
  static const std::regex fin(R"(^([\w, ]+) = (tl\.sum|triton_helpers\.max2|triton_helpers\.min2|triton_helpers\.prod|)"
                              R"(triton_helpers\.online_softmax_reduce|triton_helpers\.welford)\((.*)\))"
                              R"((\[:, None\])?(\.to\(tl\.float32\))?$)");
  std::map<std::string, size_t> acc_at;
  for (size_t i = 0; i < out.accs.size(); ++i) acc_at[out.accs[i].name] = i;
  std::set<std::string> consumed;
  size_t component = 0;
  for (size_t i = 0; i < out.mid.size(); ++i) {
    const std::string& t = out.mid[i].text;
    bool uses = std::any_of(out.accs.begin(), out.accs.end(), [&](auto& a) { return mentions(t, a.name); });
    if (!uses) continue;
    std::smatch m;
    if (!std::regex_match(t, m, fin)) return no("an accumulator used other than by its final reduction: " + t);
    std::string fn = m[2];
    std::vector<std::string> outs = split_args(m[1].str()), args = split_args(m[3].str());
    size_t n = fn == "triton_helpers.welford" ? 3 : fn == "triton_helpers.online_softmax_reduce" ? 2 : 1;
    size_t dim_at = n;  // the helpers take the accumulators, then the dim
    if (outs.size() != n || args.size() < n + 1 || args[dim_at] != "1")
      return no("a final reduction not over dim 1 of its accumulators: " + t);
    Final f{i, outs, {}, m[4].matched};
    if (n > 1 && f.two_d) return no("an unexpected final reduction: " + t);
    for (size_t j = 0; j < n; ++j) {
      auto a = acc_at.find(args[j]);
      if (a == acc_at.end() || !consumed.insert(args[j]).second)
        return no("a final reduction of something other than an accumulator: " + t);
      out.accs[a->second].component = component++;
      f.accs.push_back(args[j]);
    }
    out.finals.push_back(std::move(f));
  }
  if (consumed.size() != out.accs.size()) return no("an accumulator without a final reduction");
  for (const auto* part : {&out.loop2, &out.tail})
    for (const Line& l : *part)
      for (const Accumulator& a : out.accs)
        if (mentions(l.text, a.name)) return no("an accumulator used after its final reduction");

  // The second loop carries nothing: it assigns no name the prologue or mid defines, and the tail
  // reads nothing it assigns (but the loop's own index names).
  std::set<std::string> before, in_loop2;
  for (const auto* part : {&out.prologue, &out.mid})
    for (const Line& l : *part)
      for (const std::string& n : templates::assigned_names(l.text)) before.insert(n);
  for (const Line& l : out.loop2)
    for (const std::string& n : templates::assigned_names(l.text)) {
      if (before.count(n)) return no("the second loop accumulates " + n);
      in_loop2.insert(n);
    }
  for (const Line& l : out.tail)
    for (const std::string& n : in_loop2)
      if (mentions(l.text, n)) return no("a statement after the second loop reads " + n);
  return out;
}

std::array<Tile, 3> tiles_for(Walk w) {
  switch (w) {
    case Walk::along: return {Tile{1, 2048, 8}, Tile{1, 1024, 4}, Tile{1, 2048, 8}};
    case Walk::across: return {Tile{64, 32, 8}, Tile{32, 64, 8}, Tile{64, 32, 8}};
    case Walk::both: break;
  }
  // Both: a store across memory is whole 32-byte sectors from 16 rows of 2-byte values; a load along it, from
  // 64 or more values a row.
  // Tiles of 128 rows a program ran the apply launch of a softmax over 1873 rows of 1.2M bf16 in 8.2 ms against
  // 9.9 (64 rows) and 14.9 (16 rows of 128); more segments, more programs, helped it further (H100, session 38).
  return {Tile{32, 64, 8}, Tile{128, 64, 8}, Tile{64, 64, 8}};
}

const char* walk_words(Walk w) {
  return w == Walk::along ? "along memory" : w == Walk::across ? "across memory" : "read along and written across";
}

std::string stored_once(const Line& l) {
  if (l.text.rfind("tl.store(", 0) != 0) return indented(l);
  return std::string(l.indent, ' ') + guarded_store(l.text, "sseg == 0") + "\n";
}

}  // namespace kopt::agents::fusion
