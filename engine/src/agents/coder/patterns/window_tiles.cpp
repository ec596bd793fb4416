#include "agents/coder/patterns/window_tiles.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/columns.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

std::string outer_digits(const Window& w, size_t from, int64_t span, std::vector<std::string>* terms) {
  std::string s;
  for (size_t i = from; i < w.digits.size(); ++i) {
    const WindowDigit& d = w.digits[i];
    if (d.coef == 0 && !d.window) continue;
    std::string digit = fmt::format("(outer // {})", d.base / span);
    if (i + 1 < w.digits.size()) digit = fmt::format("({} % {})", digit, d.radix);
    s += fmt::format("    d{} = {}\n", i, digit);
    if (d.coef) terms->push_back(fmt::format("{} * d{}", d.coef, i));
  }
  return s;
}

std::vector<std::string> row_bounds(const Window& w, size_t from, size_t walk, const std::string& oh,
                                    const WindowLoad& l) {
  std::vector<std::string> ok;
  for (size_t i = from; i < w.digits.size(); ++i) {
    const WindowDigit& d = w.digits[i];
    if (i == walk) ok.push_back(fmt::format("({} < {})", oh, d.radix));
    if (!d.window) continue;
    std::string coord = fmt::format("{} * {} + {}", d.stride, i == walk ? oh : fmt::format("d{}", i), l.offset[i]);
    ok.push_back(fmt::format("({} >= 0) & ({} < {})", coord, coord, d.extent));
  }
  return ok;
}

Tiles::Tiles(const Window& w, const Tiling& t) : w_(w), t_(t) {
  const WindowDigit& d0 = w.digits[0];
  walk = w.digits.size() > 1 && w.digits[1].window && w.digits[1].radix > 1;
  span = d0.radix * (walk ? w.digits[1].radix : 1);
  vs = t.v * d0.stride;
  tw = next_pow2(vs);
  colb = cdiv(d0.radix, t.c * t.v);
  rowc = walk ? cdiv(w.digits[1].radix, t.rh) : 1;
  units = w.xnumel / span * rowc * colb;
}

std::string Tiles::head(const ir::Kernel& ker, const std::string& comment) const {
  const int64_t gc = t_.g * t_.c;
  std::string s = fmt::format("def {}({}):\n", ker.entry, templates::entry_params(ker)) + comment;
  if (!w_.xnumel_line.empty()) s += "    " + w_.xnumel_line + "\n";
  s += fmt::format("    r = tl.arange(0, {})[:, None]\n", gc);
  s += fmt::format("    unit = tl.program_id(0){} * {} + r // {}\n", w_.wide ? ".to(tl.int64)" : "", t_.g, t_.c);
  s += fmt::format("    live = unit < {}\n", units);
  s += fmt::format("    outer = unit // {}\n", rowc * colb);
  if (t_.interleave) {
    s += fmt::format("    lane = (unit % {}) * {} + r % {}\n", colb, t_.c * t_.v, t_.c);
    s += fmt::format("    ow = lane + {} * tl.arange(0, {})[None, :]\n", t_.c, t_.v);
  } else {
    s += fmt::format("    lane = (unit % {}) * {} + (r % {}) * {}\n", colb, t_.c * t_.v, t_.c, t_.v);
    s += fmt::format("    ow = lane + tl.arange(0, {})[None, :]\n", t_.v);
    s += fmt::format("    cols = tl.arange(0, {})[None, :]\n", tw);
  }
  // The outer digits' part of each row's address, and their window coordinates' bounds.
  std::vector<std::string> base;
  s += outer_digits(w_, walk ? 2 : 1, span, &base);
  s += fmt::format("    rowbase = {}\n", base.empty() ? "0" : fmt::format("{}", fmt::join(base, " + ")));
  if (walk) s += fmt::format("    oh0 = (unit // {} % {}) * {}\n", colb, rowc, t_.rh);
  return s;
}

std::string Tiles::output(const std::string& oh, const std::string& ind) const {
  const int64_t radix = w_.digits[0].radix;
  if (!walk) return fmt::format("{0}xindex = outer * {1} + ow\n{0}xmask = live & (ow < {2})\n", ind, span, radix);
  return fmt::format("{0}xindex = outer * {1} + {2} * {3} + ow\n{0}xmask = live & (ow < {3}) & ({2} < {4})\n", ind,
                     span, oh, radix, w_.digits[1].radix);
}

// The row's pointer and bounds, which both row readers start with: `ok_<tag>` (the lanes live, the row inside
// the input along every digit but the innermost) and `p_<tag>` (the row's first element).
static std::string row_head(const Window& w, bool walk, const std::vector<WindowLoad>& row, const std::string& tag,
                            const std::string& oh, const std::string& ind) {
  const WindowLoad& first = row.front();
  std::vector<std::string> ok = {"live"};
  for (std::string& b : row_bounds(w, 1, walk ? 1 : size_t(-1), oh, first)) ok.push_back(std::move(b));
  std::string addr = "rowbase";
  if (walk && w.digits[1].coef) addr += fmt::format(" + {} * {}", w.digits[1].coef, oh);
  addr += fmt::format(" + {}", first.constant - first.offset[0]);
  return fmt::format("{}ok_{} = {}\n{}p_{} = {} + ({})\n", ind, tag, fmt::join(ok, " & "), ind, tag, w.ptr, addr);
}

std::string Tiles::load_taps(const std::vector<WindowLoad>& row, const std::vector<std::string>& names,
                             const std::string& tag, const std::string& oh, const std::string& ind) const {
  const WindowDigit& d0 = w_.digits[0];
  const std::string other = w_.other.empty() ? "0.0" : w_.other;
  std::string s = row_head(w_, walk, row, tag, oh, ind);
  for (size_t i = 0; i < row.size(); ++i) {
    std::string col = fmt::format("{} * ow + {}", d0.stride, row[i].offset[0]);
    s += fmt::format("{}{} = tl.load(p_{} + ({}), ok_{} & ({} >= 0) & ({} < {}), other={})\n", ind, names[i], tag, col,
                     tag, col, col, d0.extent, other);
  }
  return s;
}

std::string Tiles::load_row(const std::vector<WindowLoad>& row, const std::vector<std::string>& names,
                            const std::string& tag, const std::string& oh, const std::string& ind) const {
  const WindowDigit& d0 = w_.digits[0];
  const int64_t gc = t_.g * t_.c;
  std::string s = row_head(w_, walk, row, tag, oh, ind);
  // Which tile and column hold output v's element at offset `off` along the innermost digit.
  auto place = [&](int64_t v, int64_t off) {
    int64_t rel = v * d0.stride + off, m = floordiv(rel, vs);
    return std::pair{m, rel - m * vs};
  };
  auto tile_name = [&](int64_t m) { return fmt::format("t_{}_{}", tag, m < 0 ? fmt::format("m{}", -m) : std::to_string(m)); };
  std::map<int64_t, std::pair<int64_t, int64_t>> tiles;  // tile -> the columns it must read
  for (const WindowLoad& l : row)
    for (int64_t v = 0; v < t_.v; ++v) {
      auto [m, col] = place(v, l.offset[0]);
      auto [it, fresh] = tiles.try_emplace(m, col, col);
      it->second.first = std::min(it->second.first, col), it->second.second = std::max(it->second.second, col);
    }
  const std::string other = w_.other.empty() ? "0.0" : w_.other;
  for (const auto& [m, range] : tiles) {
    const std::string t = tile_name(m);
    s += fmt::format("{}pos = lane * {} + {} + cols\n", ind, d0.stride, m * vs);
    std::string need = range.first == 0 && range.second == tw - 1
                           ? ""
                           : fmt::format(" & (cols >= {}) & (cols <= {})", range.first, range.second);
    s += fmt::format("{}{} = tl.load(p_{} + pos, ok_{} & (pos >= 0) & (pos < {}){}, other={})\n", ind, t, tag, tag,
                     d0.extent, need, other);
    for (const std::string& l : templates::split_columns(t, tw, gc)) s += ind + l + "\n";
  }
  for (size_t i = 0; i < row.size(); ++i) {
    std::vector<std::string> parts;
    for (int64_t v = 0; v < t_.v; ++v) {
      auto [m, col] = place(v, row[i].offset[0]);
      parts.push_back(fmt::format("{}_{}", tile_name(m), col));
    }
    for (const std::string& l : templates::join_columns(parts, gc, names[i])) s += ind + l + "\n";
  }
  return s;
}

}  // namespace kopt::agents::patterns
