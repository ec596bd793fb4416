#include "agents/coder/patterns/window.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/patterns/window_match.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

using nlohmann::json;

namespace {

// A tiling of the output: a lane owns V consecutive outputs of one row, a tile row C lanes, a
// program G tile rows (G * C = 32 * warps: one lane per thread) and RH output rows walked.
struct Tiling {
  int64_t v, c, g, rh;
  int warps;
};

// The loads that share a row (their offsets along every window digit but the innermost): each
// row is read once, as column tiles.
using RowKey = std::vector<int64_t>;

RowKey key_of(const WindowLoad& l) { return RowKey(l.offset.begin() + 1, l.offset.end()); }

class Writer {
 public:
  Writer(const Window& w, const Tiling& t) : w_(w), t_(t) {
    const WindowDigit& d0 = w.digits[0];
    walk_ = w.digits.size() > 1 && w.digits[1].window && w.digits[1].radix > 1;
    span_ = d0.radix * (walk_ ? w.digits[1].radix : 1);
    vs_ = t.v * d0.stride;
    tw_ = next_pow2(vs_);
    colb_ = cdiv(d0.radix, t.c * t.v);
    rowc_ = walk_ ? cdiv(w.digits[1].radix, t.rh) : 1;
    units_ = w.xnumel / span_ * rowc_ * colb_;
    for (size_t j = 0; j < w.loads.size(); ++j) rows_[key_of(w.loads[j])].push_back(j);
    // A row the next output row shares (its offset along the walked digit plus the stride is
    // another row's, with the same columns) is carried instead of loaded again.
    if (walk_) {
      for (const auto& [key, loads] : rows_) {
        RowKey next = key;
        next[0] += w.digits[1].stride;
        auto it = rows_.find(next);
        if (it == rows_.end() || it->second.size() != loads.size()) continue;
        std::map<size_t, size_t> from;
        for (size_t i = 0; i < loads.size(); ++i) {
          if (w.loads[loads[i]].offset[0] != w.loads[it->second[i]].offset[0]) break;
          from[loads[i]] = it->second[i];
        }
        if (from.size() == loads.size()) carried_[key] = from;
      }
    }
  }

  int64_t units() const { return units_; }
  bool walks() const { return walk_; }

  std::string entry(const ir::Kernel& ker) {
    const WindowDigit& d0 = w_.digits[0];
    const int64_t gc = t_.g * t_.c;
    std::string s = fmt::format("def {}({}):\n", ker.entry, templates::entry_params(ker));
    s += fmt::format(
        "    # kernelopt pattern window: {} loads of {} combined as Inductor wrote them; {} outputs per lane read as\n"
        "    # [{}]-wide column tiles{}.\n",
        w_.loads.size(), w_.ptr, t_.v, tw_,
        walk_ ? fmt::format(", {} output rows walked with shared window rows carried", t_.rh) : "");
    if (!w_.xnumel_line.empty()) s += "    " + w_.xnumel_line + "\n";
    s += fmt::format("    r = tl.arange(0, {})[:, None]\n", gc);
    s += fmt::format("    unit = tl.program_id(0){} * {} + r // {}\n", w_.wide ? ".to(tl.int64)" : "", t_.g, t_.c);
    s += fmt::format("    live = unit < {}\n", units_);
    s += fmt::format("    outer = unit // {}\n", rowc_ * colb_);
    s += fmt::format("    lane = (unit % {}) * {} + (r % {}) * {}\n", colb_, t_.c * t_.v, t_.c, t_.v);
    s += fmt::format("    ow = lane + tl.arange(0, {})[None, :]\n", t_.v);
    s += fmt::format("    cols = tl.arange(0, {})[None, :]\n", tw_);
    // The outer digits' part of each row's address, and their window coordinates' bounds.
    std::vector<std::string> base;
    for (size_t i = walk_ ? 2 : 1; i < w_.digits.size(); ++i) {
      const WindowDigit& d = w_.digits[i];
      if (d.coef == 0 && !d.window) continue;
      std::string digit = fmt::format("(outer // {})", d.base / span_);
      if (i + 1 < w_.digits.size()) digit = fmt::format("({} % {})", digit, d.radix);
      s += fmt::format("    d{} = {}\n", i, digit);
      if (d.coef) base.push_back(fmt::format("{} * d{}", d.coef, i));
    }
    s += fmt::format("    rowbase = {}\n", base.empty() ? "0" : fmt::format("{}", fmt::join(base, " + ")));
    if (!walk_) {
      s += "    xindex = outer * " + std::to_string(span_) + " + ow\n";
      s += fmt::format("    xmask = live & (ow < {})\n", d0.radix);
      s += step("    ", "");
      return s;
    }
    s += fmt::format("    oh0 = (unit // {} % {}) * {}\n", colb_, rowc_, t_.rh);
    for (const auto& [key, from] : carried_) s += load_row(key, "oh0", "c", "    ");
    s += fmt::format("    for rr in tl.static_range({}):\n", t_.rh);
    s += "        oh = oh0 + rr\n";
    s += fmt::format("        xindex = outer * {} + oh * {} + ow\n", span_, d0.radix);
    s += fmt::format("        xmask = live & (ow < {}) & (oh < {})\n", d0.radix, w_.digits[1].radix);
    return s + step("        ", "oh");
  }

 private:
  // Lines that read one row's column tiles (the row at output row `oh`, or the outer digits'
  // rows without a walk) into `<prefix><j>` for each of its loads j.
  std::string load_row(const RowKey& key, const std::string& oh, const std::string& prefix, const std::string& ind) {
    const WindowDigit& d0 = w_.digits[0];
    const std::vector<size_t>& loads = rows_.at(key);
    const int64_t gc = t_.g * t_.c;
    const std::string tag = fmt::format("{}{}", prefix, loads.front());
    std::vector<std::string> ok = {"live"};
    std::string addr = "rowbase";
    for (size_t i = 1; i < w_.digits.size(); ++i) {
      const WindowDigit& d = w_.digits[i];
      std::string digit = i == 1 && walk_ ? oh : fmt::format("d{}", i);
      if (i == 1 && walk_) {
        ok.push_back(fmt::format("({} < {})", oh, d.radix));
        if (d.coef) addr += fmt::format(" + {} * {}", d.coef, oh);
      }
      if (!d.window) continue;
      int64_t off = key[i - 1];
      std::string coord = fmt::format("{} * {} + {}", d.stride, digit, off);
      ok.push_back(fmt::format("({} >= 0) & ({} < {})", coord, coord, d.extent));
    }
    const WindowLoad& first = w_.loads[loads.front()];
    addr += fmt::format(" + {}", first.constant - first.offset[0]);
    std::string s = fmt::format("{}ok_{} = {}\n{}p_{} = {} + ({})\n", ind, tag, fmt::join(ok, " & "), ind, tag, w_.ptr, addr);
    // Which tile and column hold output v's element at offset `off` along the innermost digit.
    auto place = [&](int64_t v, int64_t off) {
      int64_t rel = v * d0.stride + off, m = floordiv(rel, vs_);
      return std::pair{m, rel - m * vs_};
    };
    std::map<int64_t, std::pair<int64_t, int64_t>> tiles;  // tile -> the columns it must read
    for (size_t j : loads)
      for (int64_t v = 0; v < t_.v; ++v) {
        auto [m, col] = place(v, w_.loads[j].offset[0]);
        auto [it, fresh] = tiles.try_emplace(m, col, col);
        it->second.first = std::min(it->second.first, col), it->second.second = std::max(it->second.second, col);
      }
    const std::string other = w_.other.empty() ? "0.0" : w_.other;
    for (const auto& [m, range] : tiles) {
      const std::string t = fmt::format("t_{}_{}", tag, m < 0 ? fmt::format("m{}", -m) : std::to_string(m));
      s += fmt::format("{}pos = lane * {} + {} + cols\n", ind, d0.stride, m * vs_);
      std::string need = range.first == 0 && range.second == tw_ - 1
                             ? ""
                             : fmt::format(" & (cols >= {}) & (cols <= {})", range.first, range.second);
      s += fmt::format("{}{} = tl.load(p_{} + pos, ok_{} & (pos >= 0) & (pos < {}){}, other={})\n", ind, t, tag, tag,
                       d0.extent, need, other);
      for (const std::string& l : split_cols(t, gc)) s += ind + l + "\n";
    }
    for (size_t j : loads) {
      std::vector<std::string> parts;
      for (int64_t v = 0; v < t_.v; ++v) {
        auto [m, col] = place(v, w_.loads[j].offset[0]);
        parts.push_back(fmt::format("t_{}_{}_{}", tag, m < 0 ? fmt::format("m{}", -m) : std::to_string(m), col));
      }
      for (const std::string& l : join_cols(parts, gc, fmt::format("{}{}", prefix, j))) s += ind + l + "\n";
    }
    return s;
  }

  // One output row's step: its window values, Inductor's statements, and the rows carried on.
  std::string step(const std::string& ind, const std::string& oh) {
    std::string s;
    for (const std::string& l : w_.index_lines) s += ind + l + "\n";
    for (const auto& [key, loads] : rows_) {
      if (carried_.count(key)) {
        for (size_t j : loads) s += fmt::format("{}win_{} = c{}\n", ind, j, j);
      } else {
        s += load_row(key, oh, "win_", ind);
      }
    }
    for (const std::string& l : w_.body) s += ind + l + "\n";
    for (const auto& [key, from] : carried_)
      for (const auto& [j, src] : from) s += fmt::format("{}c{} = win_{}\n", ind, j, src);
    return s;
  }

  // Lines that split a [rows, T] tile into its T columns {var}_0 .. {var}_{T-1} ([rows] each):
  // reshaped to [rows, 2, ..., 2], each tl.split peels the lowest index bit. All in registers.
  std::vector<std::string> split_cols(const std::string& var, int64_t rows) const {
    int bits = 0;
    while ((int64_t{1} << bits) < tw_) ++bits;
    std::string dims;
    for (int b = 0; b < bits; ++b) dims += ", 2";
    std::vector<std::string> lines = {fmt::format("{}_ = tl.reshape({}, [{}{}])", var, var, rows, dims)};
    std::vector<std::pair<int64_t, std::string>> parts = {{0, var + "_"}};
    for (int b = 0; b < bits; ++b) {
      std::vector<std::pair<int64_t, std::string>> next;
      for (const auto& [idx, name] : parts) {
        lines.push_back(fmt::format("{0}e, {0}o = tl.split({0})", name));
        next.emplace_back(idx, name + "e");
        next.emplace_back(idx | (int64_t{1} << b), name + "o");
      }
      parts = std::move(next);
    }
    for (const auto& [idx, name] : parts) lines.push_back(fmt::format("{}_{} = {}", var, idx, name));
    return lines;
  }

  // Lines that join V [rows] columns, in order, into one [rows, V] value `out`: tl.join appends a
  // size-2 last dimension, so pairs are joined from the highest index bit down.
  static std::vector<std::string> join_cols(std::vector<std::string> level, int64_t rows, const std::string& out) {
    std::vector<std::string> lines;
    const size_t v = level.size();
    int k = 0;
    while (level.size() > 1) {
      size_t half = level.size() / 2;
      std::vector<std::string> next;
      for (size_t i = 0; i < half; ++i) {
        std::string nm = fmt::format("{}_j{}", out, k++);
        lines.push_back(fmt::format("{} = tl.join({}, {})", nm, level[i], level[i + half]));
        next.push_back(nm);
      }
      level = std::move(next);
    }
    lines.push_back(fmt::format("{} = tl.reshape({}, [{}, {}])", out, level[0], rows, v));
    return lines;
  }

  const Window& w_;
  Tiling t_;
  bool walk_ = false;
  int64_t span_ = 0, vs_ = 0, tw_ = 0, colb_ = 0, rowc_ = 0, units_ = 0;
  std::map<RowKey, std::vector<size_t>> rows_;
  std::map<RowKey, std::map<size_t, size_t>> carried_;  // row -> (its load j -> the load it takes next)
};

}  // namespace

std::vector<Candidate> window(const KernelProfile& k, std::string* why_not) {
  std::string why;
  auto w = match_window(k, &why);
  if (!w) return templates::decline(why_not, why);
  const ir::Kernel& ker = *k.kernel;
  const WindowDigit& d0 = w->digits[0];
  const bool walk = w->digits.size() > 1 && w->digits[1].window && w->digits[1].radix > 1;
  std::vector<Candidate> out;
  // Four outputs per lane first (a stride-2 lane reads one 32-byte tile), then eight (the
  // neighbours' halo tiles cost less per output). Walked rows: 4 then 8 (unrolled, each step's
  // loads issued early; more rows hold more carried values in registers).
  // A big window (a reduction unrolled, 25 loads and up) compiles for seconds per instance: only the
  // tiling that led on the H200 (4 outputs per lane, 4 rows walked; 25- and 49-element max pools), and
  // screened after the launch configs. On the H200 it reached 1.5-1.75x on three big max pools, while
  // a launch config of Inductor's reduction had reached 3.5x on one of them (a 5x5 dilated pool) when
  // the 8 window instances did not take the screening budget first.
  const bool big = w->loads.size() > 16;
  for (int64_t v : {4, 8}) {
    if (next_pow2(v * d0.stride) > 32 || (v > 1 && v > next_pow2(d0.radix))) continue;
    if (big && v != 4) continue;
    for (int64_t rh : walk ? std::vector<int64_t>{4, 8} : std::vector<int64_t>{1}) {
      if (rh > 4 && rh > w->digits[1].radix) continue;
      if (big && rh > 4) continue;
      for (int warps : {4, 8}) {
        const int64_t threads = 32 * warps;
        const int64_t c = std::min(next_pow2(cdiv(d0.radix, v)), threads);
        Tiling t{v, c, threads / c, rh, warps};
        Writer writer(*w, t);
        const int64_t programs = cdiv(writer.units(), t.g);
        // Inductor's launcher runs cdiv(xnumel, XBLOCK) programs: XBLOCK is chosen so that covers them.
        const int64_t xblock = w->xnumel / programs;
        if (xblock < 1 || cdiv(w->xnumel, xblock) < programs) continue;
        json config = {{"XBLOCK", xblock}, {"num_warps", warps}, {"num_stages", 1}};
        Candidate cand = templates::instance(
            ker, "pooling", templates::replace_entry(ker, writer.entry(ker)), config,
            fmt::format("window: {} outputs per lane, {} lanes x {} tile rows per program{}, num_warps={}", v, c,
                        t.g, walk ? fmt::format(", {} output rows walked", rh) : "", warps));
        cand.origin = "pattern:window";
        cand.screen_last = big;
        out.push_back(std::move(cand));
      }
    }
  }
  if (out.empty()) return templates::decline(why_not, "no tiling fits the output");
  return out;
}

}  // namespace kopt::agents::patterns
