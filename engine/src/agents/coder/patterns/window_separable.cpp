#include "agents/coder/patterns/window_separable.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/patterns/window_tiles.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::patterns {

using nlohmann::json;

namespace {

// The identifiers a statement reads (attribute names after a dot left out), the assigned name too.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    if (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (i == 0 || s[i - 1] != '.') out.push_back(s.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

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

// The window as a product of offsets: taps along the innermost digit, rows along the walked one,
// planes along the others; and the ring of row values a program carries between output rows.
struct Ring {
  std::vector<int64_t> taps, rows;
  std::vector<std::vector<int64_t>> planes;  // offsets along digits 2.. (empty vectors for a 2-D window)
  int64_t first = 0, size = 0;              // the lowest row offset; rows from it to the highest
  std::vector<int64_t> carried, fresh;      // ring positions kept between output rows, and read anew
};

class Writer {
 public:
  Writer(const Window& w, const Combine& c, const Ring& ring, const Tiling& t)
      : w_(w), c_(c), ring_(ring), t_(t), tiles_(w, t) {}

  int64_t units() const { return tiles_.units; }

  std::string entry(const ir::Kernel& ker) const {
    const WindowDigit& d1 = w_.digits[1];
    std::string s = tiles_.head(
        ker, fmt::format("    # kernelopt pattern window, separable: the {} of {} taps a row, then of {} rows{}; a ring "
                         "of\n    # {} row values carried through {} output rows, {} read anew each ({} outputs per "
                         "lane).\n",
                         c_.op, ring_.taps.size(), ring_.rows.size(),
                         ring_.planes.size() > 1 ? fmt::format(" in {} planes", ring_.planes.size()) : "",
                         ring_.carried.size() * ring_.planes.size(), t_.rh,
                         ring_.fresh.size() * ring_.planes.size(), t_.v));
    for (size_t pi = 0; pi < ring_.planes.size(); ++pi)
      for (int64_t p : ring_.carried) s += row_value(pi, p, "oh0", carried_name(pi, p), "    ");
    s += fmt::format("    for rr in range({}):\n", t_.rh);
    s += "        oh = oh0 + rr\n";
    const std::string ind = "        ";
    for (size_t pi = 0; pi < ring_.planes.size(); ++pi)
      for (int64_t p : ring_.fresh) s += row_value(pi, p, "oh", fresh_name(pi, p), ind);
    std::vector<std::string> window;
    for (size_t pi = 0; pi < ring_.planes.size(); ++pi)
      for (int64_t o : ring_.rows) window.push_back(value(pi, o - ring_.first));
    s += combine_all(c_.op, window, "win_sep", ind);
    s += tiles_.output("oh", ind);
    for (const std::string& l : w_.index_lines) s += ind + l + "\n";
    for (const std::string& l : c_.body) s += ind + l + "\n";
    // Each carried position takes the one `stride` rows on; in increasing order, so every value is
    // read before it is replaced.
    for (size_t pi = 0; pi < ring_.planes.size(); ++pi)
      for (int64_t p : ring_.carried) s += fmt::format("{}{} = {}\n", ind, carried_name(pi, p), value(pi, p + d1.stride));
    return s;
  }

 private:
  static std::string carried_name(size_t plane, int64_t p) { return fmt::format("h{}_{}", plane, p); }
  static std::string fresh_name(size_t plane, int64_t p) { return fmt::format("n{}_{}", plane, p); }

  // Ring position p of a plane at the current output row: carried, or read in this step.
  std::string value(size_t plane, int64_t p) const {
    bool carried = std::binary_search(ring_.carried.begin(), ring_.carried.end(), p);
    return carried ? carried_name(plane, p) : fresh_name(plane, p);
  }

  // Lines computing the row value at ring position p of plane `plane` for output row `oh`: the
  // row's taps read as column tiles, converted as Inductor converts them, combined.
  std::string row_value(size_t plane, int64_t p, const std::string& oh, const std::string& name,
                        const std::string& ind) const {
    const WindowDigit& d1 = w_.digits[1];
    std::vector<WindowLoad> row;
    std::vector<std::string> names, taps;
    for (int64_t tap : ring_.taps) {
      const WindowLoad* like = nullptr;  // a load of this tap and plane: the row's address moves from it
      for (const WindowLoad& l : w_.loads)
        if (l.offset[0] == tap && std::equal(l.offset.begin() + 2, l.offset.end(), ring_.planes[plane].begin()))
          like = &l;
      WindowLoad l = *like;
      const int64_t row_off = ring_.first + p;
      l.constant += (row_off - l.offset[1]) * (d1.coef / d1.stride);
      l.offset[1] = row_off;
      row.push_back(l);
      names.push_back(fmt::format("{}_t{}", name, row.size() - 1));
      taps.push_back(names.back() + c_.to);
    }
    return tiles_.load_row(row, names, name, oh, ind) + combine_all(c_.op, taps, name, ind);
  }

  const Window& w_;
  const Combine& c_;
  const Ring& ring_;
  Tiling t_;
  Tiles tiles_;
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

}  // namespace

std::vector<Candidate> separable(const KernelProfile& k, const Window& w, std::string* why_not) {
  std::string why;
  auto c = read_combine(w, &why);
  if (!c) return templates::decline(why_not, why);
  if (w.digits.size() < 2 || !w.digits[1].window || w.digits[1].radix < 2)
    return templates::decline(why_not, "no second window digit with several output rows to walk");
  const WindowDigit& d0 = w.digits[0];
  const WindowDigit& d1 = w.digits[1];
  if (d1.stride < 1 || d1.coef % d1.stride != 0)
    return templates::decline(why_not, "the walked digit's stride does not step whole input rows");
  Ring ring;
  std::set<int64_t> taps, rows;
  std::set<std::vector<int64_t>> planes, all;
  for (const WindowLoad& l : w.loads) {
    taps.insert(l.offset[0]), rows.insert(l.offset[1]);
    planes.insert(std::vector<int64_t>(l.offset.begin() + 2, l.offset.end()));
    all.insert(l.offset);
  }
  if (all.size() != w.loads.size() || all.size() != taps.size() * rows.size() * planes.size())
    return templates::decline(why_not, "the window is not a product of offsets along each digit");
  ring.taps.assign(taps.begin(), taps.end());
  ring.rows.assign(rows.begin(), rows.end());
  ring.planes.assign(planes.begin(), planes.end());
  ring.first = ring.rows.front();
  ring.size = ring.rows.back() - ring.first + 1;
  const int64_t s = d1.stride;
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
  // Four outputs a lane, then eight; 16 then 64 output rows walked (a ring's first rows are read
  // once per walk). Carried values stay in registers: at most 96 a thread.
  for (int64_t v : {4, 8}) {
    if (next_pow2(v * d0.stride) > 32 || v > next_pow2(d0.radix)) continue;
    if (int64_t(ring.carried.size() * ring.planes.size()) * v > 96) continue;
    std::set<int64_t> walked;
    for (int64_t rh : {16, 64}) walked.insert(std::min(rh, d1.radix));
    for (int64_t rh : walked) {
      const int warps = 4;
      const int64_t threads = 32 * warps, lanes = lanes_per_row(d0.radix, v, threads);
      Tiling t{v, lanes, threads / lanes, rh, warps};
      Writer writer(w, *c, ring, t);
      const int64_t programs = cdiv(writer.units(), t.g);
      const int64_t xblock = w.xnumel / programs;  // Inductor's launcher runs cdiv(xnumel, XBLOCK) programs
      if (xblock < 1 || cdiv(w.xnumel, xblock) < programs) continue;
      json config = {{"XBLOCK", xblock}, {"num_warps", warps}, {"num_stages", 1}};
      Candidate cand = templates::instance(
          ker, "pooling", templates::replace_entry(ker, writer.entry(ker)), config,
          fmt::format("window separable: {} of {} taps a row, then {} rows; {} outputs per lane, {} lanes x {} tile "
                      "rows per program, {} output rows walked, num_warps={}",
                      c->op, ring.taps.size(), ring.rows.size() * ring.planes.size(), v, t.c, t.g, rh, warps));
      cand.origin = "pattern:window";
      out.push_back(std::move(cand));
    }
  }
  if (out.empty()) return templates::decline(why_not, "no tiling keeps the ring in registers");
  return out;
}

}  // namespace kopt::agents::patterns
