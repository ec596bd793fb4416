#include "agents/coder/patterns/window.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/patterns/window_match.h"
#include "agents/coder/patterns/window_separable.h"
#include "agents/coder/patterns/window_tiles.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

using nlohmann::json;

namespace {

// The loads that share a row (their offsets along every window digit but the innermost): each
// row is read once, as column tiles.
using RowKey = std::vector<int64_t>;

RowKey key_of(const WindowLoad& l) { return RowKey(l.offset.begin() + 1, l.offset.end()); }

class Writer {
 public:
  Writer(const Window& w, const Tiling& t) : w_(w), t_(t), tiles_(w, t) {
    for (size_t j = 0; j < w.loads.size(); ++j) rows_[key_of(w.loads[j])].push_back(j);
    // A row the next output row shares (its offset along the walked digit plus the stride is
    // another row's, with the same columns) is carried instead of loaded again.
    if (tiles_.walk) {
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

  int64_t units() const { return tiles_.units; }

  std::string entry(const ir::Kernel& ker) {
    const bool walk = tiles_.walk;
    std::string s = tiles_.head(
        ker, fmt::format("    # kernelopt pattern window: {} loads of {} combined as Inductor wrote them; {} outputs per "
                         "lane read as\n    # [{}]-wide column tiles{}.\n",
                         w_.loads.size(), w_.ptr, t_.v, tiles_.tw,
                         walk ? fmt::format(", {} output rows walked with shared window rows carried", t_.rh) : ""));
    if (!walk) return s + tiles_.output("", "    ") + step("    ", "");
    for (const auto& [key, from] : carried_) s += load_row(key, "oh0", "c", "    ");
    s += fmt::format("    for rr in tl.static_range({}):\n", t_.rh);
    s += "        oh = oh0 + rr\n";
    return s + tiles_.output("oh", "        ") + step("        ", "oh");
  }

 private:
  // Lines that read one row's column tiles (the row at output row `oh`, or the outer digits'
  // rows without a walk) into `<prefix><j>` for each of its loads j.
  std::string load_row(const RowKey& key, const std::string& oh, const std::string& prefix, const std::string& ind) {
    std::vector<WindowLoad> row;
    std::vector<std::string> names;
    for (size_t j : rows_.at(key)) row.push_back(w_.loads[j]), names.push_back(fmt::format("{}{}", prefix, j));
    return tiles_.load_row(row, names, fmt::format("{}{}", prefix, rows_.at(key).front()), oh, ind);
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

  const Window& w_;
  Tiling t_;
  Tiles tiles_;
  std::map<RowKey, std::vector<size_t>> rows_;
  std::map<RowKey, std::map<size_t, size_t>> carried_;  // row -> (its load j -> the load it takes next)
};

}  // namespace

std::vector<Candidate> window(const KernelProfile& k, std::string* why_not) {
  std::string why;
  auto w = match_window(k, &why);
  if (!w) return templates::decline(why_not, why);
  if (w->channels_inner) {
    // Inductor's loads are coalesced across channels already; what is left is reusing window rows.
    auto sep = separable(k, *w, &why);
    if (sep.empty())
      return templates::decline(why_not, "a channels-last pool (Inductor's loads are coalesced across channels "
                                         "already), and no separable form: " + why);
    return sep;
  }
  const ir::Kernel& ker = *k.kernel;
  const WindowDigit& d0 = w->digits[0];
  const bool walk = w->digits.size() > 1 && w->digits[1].window && w->digits[1].radix > 1;
  // Four outputs per lane first (a stride-2 lane reads one 32-byte tile), then eight (the
  // neighbours' halo tiles cost less per output). Walked rows: 4 then 8 (unrolled, each step's
  // loads issued early; more rows hold more carried values in registers).
  // A big window (a reduction unrolled, 25 loads and up) compiles for seconds per instance: only the
  // tiling that led on the H200 (4 outputs per lane, 4 rows walked; 25- and 49-element max pools), and
  // screened after the launch configs. On the H200 it reached 1.5-1.75x on three big max pools, while
  // a launch config of Inductor's reduction had reached 3.5x on one of them (a 5x5 dilated pool) when
  // the 8 window instances did not take the screening budget first.
  const bool big = w->loads.size() > 16;
  // The separable form first, where the window's values are combined by one max, min or sum: far
  // fewer loads and combines per output, and a loop instead of an unrolled walk (quick to compile).
  std::string why_separable;
  std::vector<Candidate> out = separable(k, *w, &why_separable);
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
  if (out.empty())
    return templates::decline(why_not, "no tiling fits the output (the separable form: " + why_separable + ")");
  return out;
}

}  // namespace kopt::agents::patterns
