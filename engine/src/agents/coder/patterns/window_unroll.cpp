#include "agents/coder/patterns/window_unroll.h"

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

namespace {

// The reduction header's names: dropped from the pointwise form (r0_mask is true for every r below
// r0_numel, so it reads as xmask there).
const std::set<std::string> kRHeader = {"r0_numel", "R0_BLOCK", "rnumel", "RBLOCK", "r0_index",
                                        "r0_offset", "r0_mask", "roffset", "rindex"};

bool mentions(const std::string& text, const std::set<std::string>& names) {
  for (const std::string& w : templates::words(text))
    if (names.count(w)) return true;
  return false;
}

// An r digit's value at one r (r0_4 = r0_index // 5 at r = 13: 2), Python's integer semantics.
std::optional<int64_t> eval_r(const py::Module& m, const py::Node* n, int64_t r,
                              const std::map<std::string, const py::Node*>& digits) {
  if (n->is("Constant") && n->const_kind == py::ConstKind::Int) return std::stoll(n->value);
  if (n->is("Name")) {
    std::string id(n->ident("id"));
    if (id == "r0_index" || id == "rindex") return r;
    if (id == "r0_offset" || id == "roffset") return 0;
    auto it = digits.find(id);
    if (it != digits.end()) return eval_r(m, it->second, r, digits);
    return std::nullopt;
  }
  if (n->is("UnaryOp") && n->ident("op") == "USub") {
    auto v = eval_r(m, n->child("operand"), r, digits);
    return v ? std::optional<int64_t>(-*v) : std::nullopt;
  }
  if (!n->is("BinOp")) return std::nullopt;
  auto a = eval_r(m, n->child("left"), r, digits), b = eval_r(m, n->child("right"), r, digits);
  if (!a || !b) return std::nullopt;
  const std::string op(n->ident("op"));
  if (op == "Add") return *a + *b;
  if (op == "Sub") return *a - *b;
  if (op == "Mult") return *a * *b;
  if ((op == "FloorDiv" || op == "Mod") && *b > 0) {
    int64_t q = *a / *b - ((*a % *b != 0) && (*a < 0));
    return op == "FloorDiv" ? q : *a - q * *b;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Unrolled> unroll_reduction(const ir::Kernel& k, std::string* why) {
  auto no = [&](std::string w) -> std::optional<Unrolled> { return *why = std::move(w), std::nullopt; };
  if (k.kind != "persistent_reduction") return no("not a persistent reduction");
  auto lines = templates::straight_line_body(k, why, true);
  if (!lines) return std::nullopt;
  ir::KernelSource ks = ir::parse_kernel_source(k.source, k.name, k.name);
  const std::vector<py::Node*>& stmts = ks.entry->list("body");
  if (stmts.size() != lines->size()) return no("the kernel body could not be read statement by statement");

  static const std::regex reduce(
      R"(^(\w+) = (triton_helpers\.max2|triton_helpers\.min2|tl\.sum)\((\w+), 1\)\[:, None\](.*)$)");
  static const std::regex r_extent(R"(^r0_numel = (\d+)$)");
  static const std::regex broadcast(R"(^(\w+) = tl\.broadcast_to\((\w+), \[[^\]]*\]\)$)");
  Unrolled u;
  std::set<std::string> rdep = {"r0_index", "rindex", "r0_mask", "r0_offset", "roffset"};
  std::map<std::string, const py::Node*> digits;  // r digits: r0_4 = r0_index // 5
  std::vector<std::string> pre, per_r, post;
  std::smatch red;
  std::string reduced;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const std::string& line = lines->at(i);
    std::set<std::string> names = templates::assigned_names(line);
    std::smatch m;
    if (line.find("r1_") != std::string::npos || line.find("R1_BLOCK") != std::string::npos)
      return no("a reduction over two r dimensions");
    if (std::regex_match(line, m, r_extent)) u.r = std::stoll(m[1]);
    if (names.size() == 1 && kRHeader.count(*names.begin())) continue;
    if (names.size() == 1 && (*names.begin() == "xindex")) {
      std::string x = line;
      size_t at = x.find("[:, None]");
      if (at == std::string::npos) return no("xindex is not a column of the reduction's tile");
      pre.push_back(x.replace(at, 9, "[:]"));
      continue;
    }
    if (std::regex_match(line, m, reduce)) {
      if (!reduced.empty()) return no("more than one reduction");
      if (!rdep.count(m[3])) return no("the reduction's operand does not walk the r index");
      red = m, reduced = m[1];
      continue;
    }
    const bool walks = mentions(line, rdep);
    if (walks && !reduced.empty()) return no("a statement after the reduction walks the r index");
    if (!walks) {
      (reduced.empty() ? pre : post).push_back(line);
      continue;
    }
    if (names.size() != 1) return no("a statement walking the r index assigns several names");
    const std::string name = *names.begin();
    const py::Node* st = stmts[i];
    if (st->is("Assign") && eval_r(*ks.module, st->child("value"), 0, digits)) {
      digits[name] = st->child("value");  // an r digit: a constant per r
    } else {
      per_r.push_back(line);
    }
    rdep.insert(name);
  }
  if (reduced.empty()) return no("no max2 / min2 / tl.sum over the r index");
  if (u.r < 1 || u.r > kMaxUnrolled)
    return no(fmt::format("r0_numel is not a constant of at most {} (a window that large is not unrolled)",
                          kMaxUnrolled));

  u.lines = pre;
  for (int64_t r = 0; r < u.r; ++r) {
    std::map<std::string, std::string> to = {{"r0_index", std::to_string(r)}, {"rindex", std::to_string(r)},
                                             {"r0_offset", "0"}, {"roffset", "0"}, {"r0_mask", "xmask"}};
    for (const auto& [name, expr] : digits) to[name] = std::to_string(*eval_r(*ks.module, expr, r, digits));
    for (const std::string& name : rdep)
      if (!to.count(name)) to[name] = fmt::format("{}_r{}", name, r);
    for (const std::string& line : per_r) {
      std::string s = templates::substitute_words(line, to);
      std::smatch m;
      if (std::regex_match(s, m, broadcast)) s = fmt::format("{} = {}", m[1].str(), m[2].str());
      u.lines.push_back(s);
    }
  }
  const std::string op = red[2], operand = red[3], suffix = red[4];
  auto combine = [&](const std::string& a, const std::string& b) {
    if (op == "tl.sum") return fmt::format("{} + {}", a, b);
    return fmt::format("{}({}, {})", op == "triton_helpers.max2" ? "triton_helpers.maximum" : "triton_helpers.minimum",
                       a, b);
  };
  std::string acc = fmt::format("{}_r0", operand);
  for (int64_t r = 1; r < u.r; ++r) {
    std::string next = fmt::format("{}_acc{}", reduced, r);
    u.lines.push_back(fmt::format("{} = {}", next, combine(acc, fmt::format("{}_r{}", operand, r))));
    acc = next;
  }
  u.lines.push_back(fmt::format("{} = {}{}", reduced, acc, suffix));
  u.lines.insert(u.lines.end(), post.begin(), post.end());
  u.source = fmt::format("@triton.jit\ndef {}({}):\n", k.entry, templates::entry_params(k));
  for (const std::string& l : u.lines) u.source += "    " + l + "\n";
  return u;
}

}  // namespace kopt::agents::patterns
