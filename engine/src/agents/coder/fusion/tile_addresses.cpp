#include "agents/coder/fusion/tile_addresses.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/fusion/split_loops.h"
#include "agents/coder/templates/body.h"
#include "artifact/index_map.h"
#include "artifact/pyparse/ast.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::fusion {

namespace {

using templates::LogicalLine;

constexpr const char* kXIndex = "xindex = xoffset + tl.arange(0, XBLOCK)[:, None].to(tl.int64)";
constexpr const char* kRBase = "r0_base = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)";
constexpr const char* kXLocal = "kopt_xl = tl.arange(0, XBLOCK)[:, None]";
constexpr const char* kRLocal = "kopt_rl = tl.arange(0, R0_BLOCK)[None, :]";
constexpr int64_t kLimit = (int64_t{1} << 31) - 1;

std::string term(int64_t c, const std::string& v) { return c == 1 ? v : fmt::format("{}*{}", c, v); }

// The address of one tl.load / tl.store statement split, or nothing where it is not affine in the aliases
// (or its tile's offsets could pass 32 bits).
std::optional<std::string> split_address(const std::string& text, const std::set<std::string>& xs,
                                         const std::set<std::string>& rs, int64_t xblock, int64_t r0_block) {
  std::unique_ptr<py::Module> m;
  try {
    m = py::parse(text + "\n", "<address>");
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const py::Node* call = nullptr;
  py::walk(m->root(), [&](const py::Node* n) {
    if (call || !n->is("Call")) return;
    const py::Node* f = n->child("func");
    if (f && f->is("Attribute") && (f->ident("attr") == "load" || f->ident("attr") == "store")) {
      const py::Node* v = f->child("value");
      if (v && v->is("Name") && v->ident("id") == "tl") call = n;
    }
  });
  if (!call || call->list("args").empty()) return std::nullopt;
  const py::Node* arg = call->list("args")[0];
  if (!arg->is("BinOp") || arg->ident("op") != "Add") return std::nullopt;
  const py::Node* ptr = arg->child("left");
  if (!ptr || !ptr->is("Name")) return std::nullopt;
  auto a = ir::affine(arg->child("right"));
  if (!a) return std::nullopt;
  int64_t cx = 0, cr = 0;
  for (const auto& [name, c] : a->coef) {
    if (xs.count(name)) cx += c;
    else if (rs.count(name)) cr += c;
    else return std::nullopt;  // a name from elsewhere (a segment index, a loaded value)
  }
  if (cx == 0 && cr == 0) return std::nullopt;
  // The tile's offsets in 32 bits: |a|*(XBLOCK-1) + |b|*(R0_BLOCK-1), with overflow itself checked first.
  auto span = [](int64_t c, int64_t block) {
    int64_t ac = std::llabs(c);
    return ac > kLimit / std::max<int64_t>(1, block) ? kLimit + 1 : ac * (block - 1);
  };
  if (span(cx, xblock) + span(cr, r0_block) >= kLimit) return std::nullopt;
  std::vector<std::string> base, local;
  if (a->c != 0) base.push_back(std::to_string(a->c));
  if (cx != 0) base.push_back(term(cx, "xoffset")), local.push_back(term(cx, "kopt_xl"));
  if (cr != 0) base.push_back(term(cr, "tl.cast(r0_offset, tl.int64)")), local.push_back(term(cr, "kopt_rl"));
  std::string written = fmt::format("{} + ({}) + ({})", m->text(ptr), fmt::join(base, " + "), fmt::join(local, " + "));
  size_t from = arg->begin.offset, to = arg->end.offset;
  return text.substr(0, from) + written + text.substr(to);
}

// The names an assignment `name = index` makes aliases of `index` (the index itself included).
std::set<std::string> aliases(const std::vector<LogicalLine>& lines, const std::string& index) {
  std::set<std::string> out{index};
  for (const LogicalLine& l : lines) {
    size_t eq = l.text.find(" = ");
    if (eq != std::string::npos && l.text.substr(eq + 3) == index) out.insert(l.text.substr(0, eq));
  }
  return out;
}

}  // namespace

TiledAddresses tile_addresses(const std::string& body, int64_t xblock, int64_t r0_block) {
  TiledAddresses out{body};
  std::vector<LogicalLine> lines = templates::logical_lines(body);
  bool wide = false, has_x = false, has_r = false;
  int64_t rnumel = -1;
  for (const LogicalLine& l : lines) {
    if (l.text.rfind("xoffset = ", 0) == 0 && l.text.find("tl.int64") != std::string::npos) wide = true;
    has_x |= l.text == kXIndex;
    has_r |= l.text == kRBase;
    if (l.text.rfind("r0_numel = ", 0) == 0) {
      try {
        rnumel = std::stoll(l.text.substr(11));
      } catch (const std::exception&) {
        rnumel = -1;
      }
    }
  }
  if (!wide || !has_x) return out;
  std::set<std::string> xs = aliases(lines, "xindex"), rs = has_r ? aliases(lines, "r0_index") : std::set<std::string>{};
  std::vector<LogicalLine> written;
  bool used_x = false, used_r = false, r_elsewhere = false;
  for (const LogicalLine& l : lines) {
    LogicalLine n = l;
    bool access = l.text.find("tl.load(") != std::string::npos || l.text.find("tl.store(") != std::string::npos;
    if (access) {
      if (auto s = split_address(l.text, xs, rs, xblock, r0_block)) {
        n.text = *s;
        ++out.rewritten;
        used_x |= n.text.find("kopt_xl") != std::string::npos;
        used_r |= n.text.find("kopt_rl") != std::string::npos;
      }
    }
    // Where else the loop index is read: besides its aliases' definitions and its mask, only split addresses.
    bool alias_def = false;
    for (const std::string& r : rs)
      if (l.text == r + " = r0_index" || l.text == r + " = r0_offset + r0_base") alias_def = true;
    if (!alias_def && l.text != "r0_mask = r0_index < r0_numel")
      r_elsewhere |= std::any_of(rs.begin(), rs.end(), [&](const std::string& r) { return mentions(n.text, r); });
    written.push_back(std::move(n));
  }
  if (out.rewritten == 0) return out;
  // The loop index in 32 bits where nothing but its mask reads it any more and the row's end fits.
  bool narrow = has_r && !r_elsewhere && rnumel > 0 && rnumel + r0_block < kLimit;
  std::string text;
  for (const LogicalLine& l : written) {
    if (l.text == kRBase && narrow) {
      text += std::string(l.indent, ' ') + "r0_base = tl.arange(0, R0_BLOCK)[None, :]\n";
      out.narrowed = true;
    } else {
      text += indented(l);
    }
    if (l.text == kXIndex && used_x) text += std::string(l.indent, ' ') + kXLocal + "\n";
    if (l.text == kRBase && used_r) text += std::string(l.indent, ' ') + kRLocal + "\n";
  }
  out.body = text;
  return out;
}

}  // namespace kopt::agents::fusion
