#include "agents/coder/patterns/window_separable.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/patterns/window_tiles.h"
#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

using nlohmann::json;

namespace {

using templates::words;

// A mask that is true on every output the kernel stores: xmask, alone or and-ed with itself.
bool stored_everywhere(const std::string& mask) {
  for (const std::string& w : words(mask))
    if (w != "xmask") return false;
  return mask.find_first_not_of("xmask &()") == std::string::npos;
}

std::string combine(const std::string& op, const std::string& a, const std::string& b) {
  if (op == "sum") return fmt::format("{} + {}", a, b);
  return fmt::format("triton_helpers.{}({}, {})", op == "max" ? "maximum" : "minimum", a, b);
}

// Lines combining `values` pairwise (a tree: independent combines issue together) into `out`.
std::string combine_all(const std::string& op, std::vector<std::string> values, const std::string& out,
                        const std::string& ind) {
  std::string s;
  for (int level = 0; values.size() > 1; ++level) {
    std::vector<std::string> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2) {
      std::string nm = values.size() == 2 ? out : fmt::format("{}_c{}_{}", out, level, i / 2);
      s += fmt::format("{}{} = {}\n", ind, nm, combine(op, values[i], values[i + 1]));
      next.push_back(nm);
    }
    if (values.size() % 2) next.push_back(values.back());
    values = std::move(next);
  }
  if (values.front() != out) s += fmt::format("{}{} = {}\n", ind, out, values.front());
  return s;
}

}  // namespace

std::optional<Combine> read_combine(const Window& w, std::string* why) {
  auto no = [&](std::string r) -> std::optional<Combine> { return *why = std::move(r), std::nullopt; };
  static const std::regex alias(R"(^(\w+) = (\w+)$)");
  static const std::regex convert(R"(^(\w+) = (\w+)(\.to\(tl\.\w+\))$)");
  static const std::regex where(R"(^(\w+) = tl\.where\(([\w &()]+), (\w+), (.+)\)$)");
  static const std::regex helper(R"(^(\w+) = triton_helpers\.(maximum|minimum)\((\w+), (\w+)\)$)");
  static const std::regex add(R"(^(\w+) = (\w+) \+ (\w+)$)");
  // A name in the tree: a window value (after its conversion), or a combine of `leaves` of them.
  struct Val {
    bool leaf = true;
    size_t leaves = 1;
    std::string to;
  };
  std::map<std::string, Val> vals;
  for (size_t j = 0; j < w.loads.size(); ++j) vals["win_" + std::to_string(j)] = Val{};
  std::set<size_t> tree;  // the body lines of the values' chains and their combines
  Combine c;
  std::string to;
  bool to_set = false;
  for (size_t i = 0; i < w.body.size(); ++i) {
    const std::string& line = w.body[i];
    std::smatch m;
    auto known = [&](const std::string& n) { return vals.count(n) > 0; };
    if (std::regex_match(line, m, convert) && known(m[2]) && vals[m[2]].leaf) {
      if (!vals[m[2]].to.empty()) return no(fmt::format("a window value converted twice ({})", line));
      vals[m[1]] = Val{true, 1, m[3]};
    } else if (std::regex_match(line, m, alias) && known(m[2])) {
      vals[m[1]] = vals[m[2]];
    } else if (std::regex_match(line, m, where) && known(m[3]) && vals[m[3]].leaf && stored_everywhere(m[2])) {
      vals[m[1]] = vals[m[3]];  // the value itself on every stored output
    } else if ((std::regex_match(line, m, helper) && known(m[3]) && known(m[4])) ||
               (std::regex_match(line, m, add) && known(m[2]) && known(m[3]))) {
      const bool h = m.size() == 5;
      const std::string op = !h ? "sum" : m[2] == "maximum" ? "max" : "min";
      if (!c.op.empty() && op != c.op) return no(fmt::format("the window values are combined by {} and {}", c.op, op));
      c.op = op;
      Val v{false, 0, ""};
      for (const std::string& operand : {m[h ? 3 : 2].str(), m[h ? 4 : 3].str()}) {
        const Val& o = vals[operand];
        if (o.leaf) {
          if (to_set && o.to != to) return no("the window values are converted differently before combining");
          to = o.to, to_set = true;
        }
        v.leaves += o.leaves;
      }
      vals[m[1]] = v;
    } else {
      continue;
    }
    tree.insert(i);
  }
  if (c.op.empty()) return no("the window values are not combined by one max, min or sum");
  // Uses: every value and combine but the root is read exactly once, by the tree; the root only
  // outside it.
  std::map<std::string, int> in_tree, outside;
  size_t root_line = w.body.size();
  for (size_t i = 0; i < w.body.size(); ++i) {
    std::vector<std::string> ws = words(w.body[i]);
    if (!ws.empty()) ws.erase(ws.begin());  // the assigned name
    for (const std::string& n : ws)
      if (vals.count(n)) ++(tree.count(i) ? in_tree : outside)[n];
  }
  for (const auto& [name, v] : vals) {
    if (outside.count(name)) {
      if (v.leaf || v.leaves != w.loads.size() || !c.root.empty())
        return no(fmt::format("{} is read besides its combine (an index output, or a value used twice)", name));
      c.root = name;
      continue;
    }
    if (in_tree[name] > 1) return no(fmt::format("{} is combined twice", name));
  }
  if (c.root.empty()) return no("no statement combines every window value");
  for (size_t i : tree)
    if (words(w.body[i]).front() == c.root) root_line = i;
  c.to = to;
  for (size_t i = 0; i < w.body.size(); ++i) {
    if (i == root_line) c.body.push_back(c.root + " = win_sep");
    if (!tree.count(i)) c.body.push_back(w.body[i]);
  }
  return c;
}

namespace {

// The window as a product of offsets: taps along the first window digit (the innermost, or the one
// after the channel), rows along the next (walked), planes along the others; and the ring of row
// values a program carries between output rows.
struct Ring {
  size_t tap = 0, walk = 1;  // digit indices: 0 and 1, or 1 and 2 under a channel digit
  std::vector<int64_t> taps, rows;
  std::vector<std::vector<int64_t>> planes;  // offsets along digits after `walk` (empty for a 2-D window)
  int64_t first = 0, size = 0;              // the lowest row offset; rows from it to the highest
  std::vector<int64_t> carried, fresh;      // ring positions kept between output rows, and read anew
};

std::string carried_name(size_t plane, int64_t p) { return fmt::format("h{}_{}", plane, p); }
std::string fresh_name(size_t plane, int64_t p) { return fmt::format("n{}_{}", plane, p); }

// Ring position p of a plane at the current output row: carried, or read in this step.
std::string ring_value(const Ring& ring, size_t plane, int64_t p) {
  bool carried = std::binary_search(ring.carried.begin(), ring.carried.end(), p);
  return carried ? carried_name(plane, p) : fresh_name(plane, p);
}

// The loads of one input row (ring position p of a plane), one per tap: each made from a load of the
// window with the same tap and plane, its address moved along the walked digit.
std::vector<WindowLoad> row_loads(const Window& w, const Ring& ring, size_t plane, int64_t p) {
  const WindowDigit& dw = w.digits[ring.walk];
  std::vector<WindowLoad> row;
  for (int64_t tap : ring.taps) {
    const WindowLoad* like = nullptr;
    for (const WindowLoad& l : w.loads)
      if (l.offset[ring.tap] == tap &&
          std::equal(l.offset.begin() + ring.walk + 1, l.offset.end(), ring.planes[plane].begin()))
        like = &l;
    WindowLoad l = *like;
    const int64_t row_off = ring.first + p;
    l.constant += (row_off - l.offset[ring.walk]) * (dw.coef / dw.stride);
    l.offset[ring.walk] = row_off;
    row.push_back(l);
  }
  return row;
}

// The generated kernel's opening comment: what it combines, and the ring it carries.
std::string ring_comment(const std::string& layout, const Combine& c, const Ring& ring, int64_t rh,
                         const std::string& per_lane) {
  return fmt::format(
      "    # kernelopt pattern window, separable{}: the {} of {} taps a row, then of {} rows{}; a ring of\n"
      "    # {} row values carried through {} output rows, {} read anew each ({}).\n",
      layout, c.op, ring.taps.size(), ring.rows.size(),
      ring.planes.size() > 1 ? fmt::format(" in {} planes", ring.planes.size()) : "",
      ring.carried.size() * ring.planes.size(), rh, ring.fresh.size() * ring.planes.size(), per_lane);
}

// The loop over a program's output rows that both layouts share: each step's fresh row values, the
// window's value, the output index, Inductor's statements, and the ring shifted on. `row_value`
// writes the lines of one row value (plane, position, output row, name, indent).
template <class RowValue>
std::string walk_rows(const Window& w, const Combine& c, const Ring& ring, int64_t rh, const std::string& output,
                      const RowValue& row_value) {
  std::string s;
  for (size_t pi = 0; pi < ring.planes.size(); ++pi)
    for (int64_t p : ring.carried) s += row_value(pi, p, "oh0", carried_name(pi, p), "    ");
  s += fmt::format("    for rr in range({}):\n", rh);
  s += "        oh = oh0 + rr\n";
  const std::string ind = "        ";
  for (size_t pi = 0; pi < ring.planes.size(); ++pi)
    for (int64_t p : ring.fresh) s += row_value(pi, p, "oh", fresh_name(pi, p), ind);
  std::vector<std::string> window;
  for (size_t pi = 0; pi < ring.planes.size(); ++pi)
    for (int64_t o : ring.rows) window.push_back(ring_value(ring, pi, o - ring.first));
  s += combine_all(c.op, window, "win_sep", ind);
  s += output;
  for (const std::string& l : w.index_lines) s += ind + l + "\n";
  for (const std::string& l : c.body) s += ind + l + "\n";
  // Each carried position takes the one `stride` rows on; in increasing order, so every value is
  // read before it is replaced.
  for (size_t pi = 0; pi < ring.planes.size(); ++pi)
    for (int64_t p : ring.carried)
      s += fmt::format("{}{} = {}\n", ind, carried_name(pi, p), ring_value(ring, pi, p + w.digits[ring.walk].stride));
  return s;
}

// What a lane owns, for the kernel's comment and the candidate's description: "4 outputs per lane",
// "2 outputs per lane, 16 apart", "1 outputs per lane (interleaved)".
std::string per_lane(const Tiling& t, const char* what) {
  std::string how = !t.interleave ? "" : t.v > 1 ? fmt::format(", {} apart", t.c) : " (interleaved)";
  return fmt::format("{} {} per lane{}", t.v, what, how);
}

class Writer {
 public:
  Writer(const Window& w, const Combine& c, const Ring& ring, const Tiling& t)
      : w_(w), c_(c), ring_(ring), t_(t), tiles_(w, t) {}

  int64_t units() const { return tiles_.units; }

  std::string entry(const ir::Kernel& ker) const {
    std::string s = tiles_.head(ker, ring_comment("", c_, ring_, t_.rh, per_lane(t_, "outputs")));
    return s + walk_rows(w_, c_, ring_, t_.rh, tiles_.output("oh", "        "),
                         [&](size_t plane, int64_t p, const std::string& oh, const std::string& name,
                             const std::string& ind) { return row_value(plane, p, oh, name, ind); });
  }

 private:
  // Lines computing the row value at ring position p of plane `plane` for output row `oh`: the
  // row's taps read (as column tiles, or one load a tap interleaved), converted as Inductor converts
  // them, combined.
  std::string row_value(size_t plane, int64_t p, const std::string& oh, const std::string& name,
                        const std::string& ind) const {
    std::vector<WindowLoad> row = row_loads(w_, ring_, plane, p);
    std::vector<std::string> names, taps;
    for (size_t t = 0; t < row.size(); ++t) {
      names.push_back(fmt::format("{}_t{}", name, t));
      taps.push_back(names.back() + c_.to);
    }
    std::string loads =
        t_.interleave ? tiles_.load_taps(row, names, name, oh, ind) : tiles_.load_row(row, names, name, oh, ind);
    return loads + combine_all(c_.op, taps, name, ind);
  }

  const Window& w_;
  const Combine& c_;
  const Ring& ring_;
  Tiling t_;
  Tiles tiles_;
};

// The channels-last layout: a lane owns V consecutive channels of one output column (loads coalesced
// across channels, as Inductor's), a tile row C lanes, a program G tile rows (units of channel
// block, output column, row chunk, outer index), each walking RH output rows. A row value combines
// the column's taps, each one vector load of the lane's channels.
class ChannelsWriter {
 public:
  ChannelsWriter(const Window& w, const Combine& c, const Ring& ring, const Tiling& t) : w_(w), c_(c), ring_(ring), t_(t) {
    const WindowDigit &ch = w.digits[0], &col = w.digits[1], &row = w.digits[2];
    chb_ = cdiv(ch.radix, t.c * t.v);
    rowc_ = cdiv(row.radix, t.rh);
    span_ = ch.radix * col.radix * row.radix;
    units_ = w.xnumel / span_ * rowc_ * col.radix * chb_;
  }

  int64_t units() const { return units_; }

  std::string entry(const ir::Kernel& ker) const {
    const WindowDigit &ch = w_.digits[0], &col = w_.digits[1], &row = w_.digits[2];
    std::string s = fmt::format("def {}({}):\n", ker.entry, templates::entry_params(ker));
    s += ring_comment(", channels last", c_, ring_, t_.rh, per_lane(t_, "channels"));
    if (!w_.xnumel_line.empty()) s += "    " + w_.xnumel_line + "\n";
    s += fmt::format("    r = tl.arange(0, {})[:, None]\n", t_.g * t_.c);
    s += fmt::format("    unit = tl.program_id(0){} * {} + r // {}\n", w_.wide ? ".to(tl.int64)" : "", t_.g, t_.c);
    s += fmt::format("    live = unit < {}\n", units_);
    s += fmt::format("    ch = (unit % {}) * {} + (r % {}) * {} + tl.arange(0, {})[None, :]\n", chb_, t_.c * t_.v, t_.c,
                     t_.v, t_.v);
    s += fmt::format("    chok = live & (ch < {})\n", ch.radix);
    s += fmt::format("    ow = unit // {} % {}\n", chb_, col.radix);
    s += fmt::format("    oh0 = unit // {} % {} * {}\n", chb_ * col.radix, rowc_, t_.rh);
    s += fmt::format("    outer = unit // {}\n", chb_ * col.radix * rowc_);
    std::vector<std::string> base = {"ch"};
    if (col.coef) base.push_back(fmt::format("{} * ow", col.coef));
    s += outer_digits(w_, 3, span_, &base);
    s += fmt::format("    rowbase = {}\n", fmt::join(base, " + "));
    const std::string output =
        fmt::format("        xindex = outer * {} + oh * {} + ow * {} + ch\n        xmask = chok & (oh < {})\n", span_,
                    row.base, col.base, row.radix);
    return s + walk_rows(w_, c_, ring_, t_.rh, output,
                         [&](size_t plane, int64_t p, const std::string& oh, const std::string& name,
                             const std::string& ind) { return row_value(plane, p, oh, name, ind); });
  }

 private:
  std::string row_value(size_t plane, int64_t p, const std::string& oh, const std::string& name,
                        const std::string& ind) const {
    std::vector<WindowLoad> row = row_loads(w_, ring_, plane, p);
    const WindowDigit& dr = w_.digits[2];
    // The row's bounds: the output row's, and each window coordinate's but the taps'.
    std::vector<std::string> ok = {"chok"};
    for (std::string& b : row_bounds(w_, 2, 2, oh, row[0])) ok.push_back(std::move(b));
    const WindowDigit& dc = w_.digits[1];
    std::string s = fmt::format("{}ok_{} = {}\n{}p_{} = {} + (rowbase{})\n", ind, name, fmt::join(ok, " & "), ind, name,
                                w_.ptr, dr.coef ? fmt::format(" + {} * {}", dr.coef, oh) : "");
    const std::string other = w_.other.empty() ? "0.0" : w_.other;
    std::vector<std::string> taps;
    for (size_t t = 0; t < row.size(); ++t) {
      std::string coord = fmt::format("{} * ow + {}", dc.stride, row[t].offset[1]);
      std::string tap = fmt::format("{}_t{}", name, t);
      s += fmt::format("{}{} = tl.load(p_{} + {}, ok_{} & ({} >= 0) & ({} < {}), other={})\n", ind, tap, name,
                       row[t].constant, name, coord, coord, dc.extent, other);
      taps.push_back(tap + c_.to);
    }
    return s + combine_all(c_.op, taps, name, ind);
  }

  const Window& w_;
  const Combine& c_;
  const Ring& ring_;
  Tiling t_;
  int64_t chb_ = 0, rowc_ = 0, span_ = 0, units_ = 0;
};

// Lanes per tile row: the power of two (at most one per thread) that pads the output row least
// with V outputs a lane; the widest on a tie.
int64_t lanes_per_row(int64_t radix, int64_t v, int64_t threads) {
  int64_t best = threads, waste = -1;
  for (int64_t c = threads; c >= 1; c /= 2) {
    int64_t pad = cdiv(radix, c * v) * c * v - radix;
    if (waste < 0 || pad < waste) best = c, waste = pad;
  }
  return best;
}

// Interleaved lanes per tile row: the widest power of two up to a warp (its loads coalesce across the row's
// lanes) that pads the output row by at most an eighth, else the least padding.
int64_t interleaved_lanes(int64_t radix, int64_t v, int64_t threads) {
  for (int64_t c = std::min<int64_t>(32, threads); c >= 2; c /= 2)
    if (8 * (cdiv(radix, c * v) * c * v - radix) <= radix) return c;
  return lanes_per_row(radix, v, std::min<int64_t>(32, threads));
}

}  // namespace

std::vector<Candidate> separable(const KernelProfile& k, const Window& w, std::string* why_not) {
  std::string why;
  auto c = read_combine(w, &why);
  if (!c) return templates::decline(why_not, why);
  Ring ring;
  ring.tap = w.channels_inner ? 1 : 0, ring.walk = ring.tap + 1;
  if (w.digits.size() <= ring.walk || !w.digits[ring.walk].window || w.digits[ring.walk].radix < 2)
    return templates::decline(why_not, "no second window digit with several output rows to walk");
  const WindowDigit& d0 = w.digits[0];
  const WindowDigit& dw = w.digits[ring.walk];
  if (dw.stride < 1 || dw.coef % dw.stride != 0)
    return templates::decline(why_not, "the walked digit's stride does not step whole input rows");
  std::set<int64_t> taps, rows;
  std::set<std::vector<int64_t>> planes, all;
  for (const WindowLoad& l : w.loads) {
    taps.insert(l.offset[ring.tap]), rows.insert(l.offset[ring.walk]);
    planes.insert(std::vector<int64_t>(l.offset.begin() + ring.walk + 1, l.offset.end()));
    all.insert(l.offset);
  }
  if (all.size() != w.loads.size() || all.size() != taps.size() * rows.size() * planes.size())
    return templates::decline(why_not, "the window is not a product of offsets along each digit");
  ring.taps.assign(taps.begin(), taps.end());
  ring.rows.assign(rows.begin(), rows.end());
  ring.planes.assign(planes.begin(), planes.end());
  ring.first = ring.rows.front();
  ring.size = ring.rows.back() - ring.first + 1;
  const int64_t s = dw.stride;
  for (int64_t p = 0; p < ring.size; ++p) {
    bool needed = false;  // some output row reads the input row at this position: p - k * s is a row offset
    for (int64_t q = p; q >= 0 && !needed; q -= s) needed = rows.count(ring.first + q) > 0;
    if (!needed) continue;
    (p < ring.size - s ? ring.carried : ring.fresh).push_back(p);
  }
  if (ring.carried.empty())
    return templates::decline(why_not, "the windows of consecutive output rows share no input row");
  const ir::Kernel& ker = *k.kernel;
  std::vector<Candidate> out;
  // Interleaved lanes (a lane's outputs a tile row apart: every tap's load coalesced across the lanes) with
  // one then two outputs a lane; column tiles with four outputs a lane (the positions neighbouring outputs
  // share read once: on the H200 their loads, 4 * stride positions apart between lanes, ran 2.5x slower than
  // a launch config of Inductor's own kernel on a 7x7 stride-3 pool). Channels last: four channels a lane,
  // then two (few channels leave lanes idle). 16 then 64 output rows walked (a ring's first rows are read
  // once per walk). Carried values stay in registers: at most 96 a thread.
  struct Layout {
    int64_t v;
    bool interleave;
  };
  std::vector<Layout> layouts = w.channels_inner ? std::vector<Layout>{{4, false}, {2, false}}
                                                 : std::vector<Layout>{{1, true}, {2, true}, {4, false}};
  for (const auto& [v, interleave] : layouts) {
    if (!w.channels_inner && !interleave && next_pow2(v * d0.stride) > 32) continue;
    if (v > next_pow2(d0.radix) || int64_t(ring.carried.size() * ring.planes.size()) * v > 96) continue;
    std::set<int64_t> walked;
    for (int64_t rh : {16, 64}) walked.insert(std::min(rh, dw.radix));
    for (int64_t rh : walked) {
      const int warps = 4;
      const int64_t threads = 32 * warps;
      const int64_t lanes = interleave ? interleaved_lanes(d0.radix, v, threads) : lanes_per_row(d0.radix, v, threads);
      Tiling t{v, lanes, threads / lanes, rh, warps, interleave};
      std::string entry;
      int64_t units = 0;
      if (w.channels_inner) {
        ChannelsWriter writer(w, *c, ring, t);
        entry = writer.entry(ker), units = writer.units();
      } else {
        Writer writer(w, *c, ring, t);
        entry = writer.entry(ker), units = writer.units();
      }
      const int64_t programs = cdiv(units, t.g);
      const int64_t xblock = w.xnumel / programs;  // Inductor's launcher runs cdiv(xnumel, XBLOCK) programs
      if (xblock < 1 || cdiv(w.xnumel, xblock) < programs) continue;
      json config = {{"XBLOCK", xblock}, {"num_warps", warps}, {"num_stages", 1}};
      Candidate cand = templates::instance(
          ker, "pooling", templates::replace_entry(ker, entry), config,
          fmt::format("window separable{}: {} of {} taps a row, then {} rows; {}, {} lanes x {} tile rows per "
                      "program, {} output rows walked, num_warps={}",
                      w.channels_inner ? ", channels last" : "", c->op, ring.taps.size(),
                      ring.rows.size() * ring.planes.size(), per_lane(t, w.channels_inner ? "channels" : "outputs"),
                      t.c, t.g, rh, warps));
      cand.origin = "pattern:window";
      out.push_back(std::move(cand));
    }
  }
  if (out.empty()) return templates::decline(why_not, "no tiling keeps the ring in registers");
  return out;
}

}  // namespace kopt::agents::patterns
