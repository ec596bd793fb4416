#include "agents/coder/patterns/axis_reduction.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"
#include "agents/coder/templates/transposed_reduction.h"
#include "artifact/pin_config.h"

namespace kopt::agents::patterns {

using nlohmann::json;
using templates::decline;
using templates::replace_all;
using templates::split_top;

namespace {

// `s` without the parentheses that enclose all of it ("(a + b)" -> "a + b", "(a) + (b)" stays).
std::string unwrap(std::string s) {
  auto enclosed = [](const std::string& t) {
    if (t.size() < 2 || t.front() != '(' || t.back() != ')') return false;
    int depth = 0;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      depth += (t[i] == '(') - (t[i] == ')');
      if (depth == 0) return false;  // the first parenthesis closes before the end
    }
    return true;
  };
  while (enclosed(s)) s = s.substr(1, s.size() - 2);
  return s;
}

std::set<std::string> words(const std::string& s) {
  static const std::regex word(R"([A-Za-z_]\w*)");
  std::set<std::string> out;
  for (std::sregex_iterator it(s.begin(), s.end(), word), end; it != end; ++it) out.insert(it->str());
  return out;
}

// A load's address in the kernel's digit variables: the coefficient of each `c*name` or `name`
// term, and the names found in any term that is not of that form.
struct Address {
  std::map<std::string, int64_t> coef;
  std::set<std::string> nonaffine;
};

Address address_of(const std::string& index) {
  static const std::regex term(R"(^(?:(-?\d+)\*)?([A-Za-z_]\w*)$)"), constant(R"(^-?\d+$)");
  Address a;
  for (std::string t : split_top(unwrap(index), " + ")) {
    t = unwrap(t);
    std::smatch m;
    if (std::regex_match(t, m, term)) a.coef[m[2]] += m[1].matched ? std::stoll(m[1]) : 1;
    else if (!std::regex_match(t, constant))
      for (const std::string& w : words(t)) a.nonaffine.insert(w);
  }
  return a;
}

// The index expression of every `tl.load(ptr + (index), ...)` in `line`.
std::vector<std::string> load_indices(const std::string& line) {
  std::vector<std::string> out;
  for (size_t p = line.find("tl.load("); p != std::string::npos; p = line.find("tl.load(", p + 1)) {
    size_t open = p + 7;
    int depth = 0;
    size_t close = open;
    for (; close < line.size(); ++close) {
      depth += (line[close] == '(' || line[close] == '[') - (line[close] == ')' || line[close] == ']');
      if (depth == 0) break;
    }
    std::string pointer = split_top(line.substr(open + 1, close - open - 1), ", ").front();
    std::vector<std::string> sum = split_top(pointer, " + ");
    sum.erase(sum.begin());  // the pointer argument
    std::string index;
    for (const std::string& t : sum) index += (index.empty() ? "" : " + ") + t;
    out.push_back(index);
  }
  return out;
}

// The kernel's decomposition of its output index, as the generator reads it.
struct Axes {
  std::string inner;  // the x digit of stride 1 in the loads along r
  int64_t c = 0;      // its extent (`xindex % C`; xnumel when it is `xindex` itself)
  int64_t r_stride = 0;  // the reduced index's smallest stride in those loads (for the description)
};

std::optional<Axes> read_axes(const std::vector<std::string>& lines, int64_t xnumel, std::string* why_not) {
  auto no = [&](const std::string& why) {
    decline(why_not, why);
    return std::nullopt;
  };
  static const std::regex assign(R"(^(\w+) = (.*)$)"), mod(R"(^\(?xindex % (\d+)\)?$)");
  std::map<std::string, int64_t> digit_c;  // x digits usable as the inner one: name -> C
  std::set<std::string> xvars, rvars;
  for (const std::string& l : lines) {
    std::string s = l.substr(l.find_first_not_of(' '));
    std::smatch m;
    if (!std::regex_match(s, m, assign)) continue;
    std::string name = m[1], rhs = m[2];
    std::set<std::string> w = words(rhs);
    if (w.count("xindex") && name != "xmask" && name != "xindex") {
      xvars.insert(name);
      std::smatch d;
      if (rhs == "xindex") digit_c[name] = xnumel;
      else if (std::regex_match(rhs, d, mod)) digit_c[name] = std::stoll(d[1]);
    }
    if ((w.count("r0_index") || w.count("rindex")) && name != "r0_mask" && rhs.find("tl.") == std::string::npos)
      rvars.insert(name);
  }
  std::optional<Axes> axes;
  bool any_r = false;
  for (const std::string& l : lines) {
    for (const std::string& index : load_indices(l)) {
      Address a = address_of(index);
      std::string s = l.substr(l.find_first_not_of(' '));
      for (const std::string& n : a.nonaffine)
        if (rvars.count(n)) return no(fmt::format("`{}` is not affine in the reduced index", s));
      int64_t r_stride = 0;
      bool on_x = false;
      for (const auto& [n, c] : a.coef) {
        if (rvars.count(n) && c != 0) {
          any_r = true;
          r_stride = r_stride == 0 ? std::abs(c) : std::min(r_stride, std::abs(c));
        }
        on_x = on_x || (xvars.count(n) && c != 0);
      }
      for (const std::string& n : a.nonaffine) on_x = on_x || xvars.count(n);
      if (r_stride == 0 || !on_x) continue;  // a broadcast operand: per output, or per reduced index
      if (r_stride == 1)
        return no(fmt::format("a reduction along the contiguous axis (`{}`: the reduced index has stride 1); "
                              "Inductor's layout is coalesced there, the row templates and configs cover it",
                              s));
      std::string inner;
      for (const auto& [n, c] : a.coef)
        if (c == 1 && xvars.count(n)) inner = n;
      if (inner.empty()) return no(fmt::format("`{}` is contiguous along no output digit", s));
      if (!digit_c.count(inner))
        return no(fmt::format("`{}` is contiguous along {}, not the output index's fastest digit", s, inner));
      if (axes && digit_c[axes->inner] != digit_c[inner])
        return no(fmt::format("loads contiguous along different output digits ({} and {})", axes->inner, inner));
      if (!axes) axes = Axes{inner, digit_c[inner], r_stride};
      axes->r_stride = std::min(axes->r_stride, r_stride);
    }
  }
  if (!any_r) return no("no load along the reduced index");
  if (!axes) return no("no load depends on both the reduced index and the outputs");
  if (axes->c <= 1 || xnumel % axes->c != 0)
    return no(fmt::format("xnumel {} is not a multiple of the inner extent {}", xnumel, axes->c));
  return axes;
}

// A program's tile of outputs: `ob` outer rows by `ib` adjacent inner positions.
struct Tile {
  int64_t ib, ob;
};

// Inner blocks that waste at most 40% of the lanes on the padding past C (or C's own power of two,
// at most 256), widest first, at most three; outer rows so a tile holds 32-256 outputs.
//
// A narrow inner axis (C < 16) comes first as one outer row (then two) by all of C: the tile's
// [R0_BLOCK, C] block is then R0_BLOCK * C contiguous elements, which a warp reads as whole runs of
// the row (4 reduced steps x 8 lanes at C = 7), where 32-256 outputs from several outer rows read
// runs of C elements each, a row's length apart (4.9x slower than Inductor at C = 7 on the H200).
std::vector<Tile> tiles(int64_t c, int64_t outer, bool exact) {
  std::vector<Tile> out;
  const int64_t np2c = next_pow2(c);
  if (np2c < 16 && (!exact || np2c == c))
    for (int64_t ob : {1, 2})
      if (ob <= next_pow2(outer) && (!exact || outer % ob == 0)) out.push_back({np2c, ob});
  std::vector<int64_t> ibs;
  for (int64_t ib = 256; ib >= std::min<int64_t>(np2c, 16) && ibs.size() < 3; ib /= 2) {
    if (ib > np2c || (exact && c % ib != 0)) continue;
    if (cdiv(c, ib) * ib * 10 <= c * 14) ibs.push_back(ib);
  }
  if (np2c <= 256 && (!exact || np2c == c) && std::find(ibs.begin(), ibs.end(), np2c) == ibs.end()) ibs.push_back(np2c);
  for (int64_t ib : ibs) {
    int added = 0;
    for (int64_t xt : {64, 128, 32, 256}) {
      int64_t ob = xt / ib;
      bool seen = std::any_of(out.begin(), out.end(), [&](const Tile& t) { return t.ib == ib && t.ob == ob; });
      if (ob < 1 || ob > next_pow2(outer) || (exact && outer % ob != 0) || added == 2 || seen) continue;
      out.push_back({ib, ob});
      ++added;
    }
    if (added == 0) out.push_back({ib, 1});  // a narrow inner block alone (one outer row)
  }
  return out;
}

}  // namespace

std::vector<Candidate> axis_reduction(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "reduction" && ker.kind != "persistent_reduction") return no("not a reduction kernel");
  std::optional<templates::TransposedReduction> t = templates::transposed_reduction(k, why_not);
  if (!t) return {};
  std::optional<Axes> axes = read_axes(t->lines, t->xnumel, why_not);
  if (!axes) return {};
  const int64_t c = axes->c, outer = t->xnumel / c;

  // The statements that map programs to outputs, found in the transposed body.
  int xoffset_line = -1, xindex_line = -1, xmask_line = -1;
  bool wide = false;  // Inductor's 64-bit indexing: the program id widened before it is scaled
  for (size_t i = 0; i < t->lines.size(); ++i) {
    std::string s = t->lines[i].substr(t->lines[i].find_first_not_of(' '));
    if (s == "xoffset = tl.program_id(0) * XBLOCK") xoffset_line = static_cast<int>(i);
    else if (s == "xoffset = tl.program_id(0).to(tl.int64) * XBLOCK") xoffset_line = static_cast<int>(i), wide = true;
    else if (s == "xindex = xoffset + tl.arange(0, XBLOCK)[None, :]" ||
             s == "xindex = xoffset + tl.arange(0, XBLOCK)[None, :].to(tl.int64)")
      xindex_line = static_cast<int>(i);
    else if (s.rfind("xmask = ", 0) == 0) xmask_line = static_cast<int>(i);
    else if (s.find("xoffset") != std::string::npos || s.find("tl.program_id") != std::string::npos)
      return no(fmt::format("`{}` uses the program's offset", s));
  }
  if (xoffset_line < 0 || xindex_line < 0 || xmask_line < 0) return no("not Inductor's 1-D output index");
  const std::string xmask_stmt = t->lines[xmask_line].substr(t->lines[xmask_line].find_first_not_of(' '));
  if (!t->x_unmasked && xmask_stmt != "xmask = xindex < xnumel")
    return no("`" + xmask_stmt + "` is not Inductor's x mask");
  // Unmasked, programs past the tiles redo one: harmless only when no output is also read.
  if (t->x_unmasked)
    for (const std::string& l : t->lines)
      if (l.find("tl.load(in_out_ptr") != std::string::npos)
        return no("an unmasked kernel that reads its in-place output");

  std::vector<Candidate> outc;
  for (const Tile& tile : tiles(c, outer, t->x_unmasked)) {
    const int64_t xt = tile.ib * tile.ob, ni = cdiv(c, tile.ib), programs = ni * cdiv(outer, tile.ob);
    // Inductor's Grid1D launches cdiv(xnumel, XBLOCK) programs: XBLOCK is chosen so that covers the tiles.
    const int64_t xblock = t->xnumel / programs;
    if (xblock < 1 || cdiv(t->xnumel, xblock) < programs) continue;
    static const std::regex xblock_word(R"(\bXBLOCK\b)");
    std::string body;
    for (size_t i = 0; i < t->lines.size(); ++i) {
      const std::string& l = t->lines[i];
      std::string ind = l.substr(0, l.find_first_not_of(' ')), s = l.substr(ind.size());
      if (static_cast<int>(i) == xoffset_line) continue;
      if (static_cast<int>(i) == xindex_line) {
        // Programs past the tiles (G2's small config launches more) are masked out; an unmasked kernel
        // (tiles that divide the extents exactly) has them redo a tile and store the same values.
        std::string pid = wide ? "tl.program_id(0).to(tl.int64)" : "tl.program_id(0)";
        body += ind + (t->x_unmasked ? fmt::format("kopt_pid = {} % {}\n", pid, programs)
                                     : fmt::format("kopt_pid = {}\n", pid));
        body += ind + "kopt_lane = tl.arange(0, XTILE)[None, :]\n";
        body += ind + fmt::format("kopt_inner = (kopt_pid % {}) * {} + kopt_lane % {}\n", ni, tile.ib, tile.ib);
        body += ind + fmt::format("kopt_outer = (kopt_pid // {}) * {} + kopt_lane // {}\n", ni, tile.ob, tile.ib);
        body += ind + fmt::format("xindex = kopt_outer * {} + kopt_inner\n", c);
        continue;
      }
      if (static_cast<int>(i) == xmask_line && !t->x_unmasked) {
        body += ind + fmt::format("xmask = (kopt_inner < {}) & (xindex < xnumel)\n", c);
        continue;
      }
      // The tile's coordinates stand for the digits Inductor computes from xindex (the same values
      // on every unmasked lane), so Triton sees the inner axis contiguous.
      if (s == fmt::format("{} = (xindex % {})", axes->inner, c) ||
          s == fmt::format("{} = xindex % {}", axes->inner, c)) {
        body += ind + axes->inner + " = kopt_inner\n";
        continue;
      }
      static const std::regex outer_digit(R"(^(\w+) = xindex // (\d+)$)");
      std::smatch m;
      if (std::regex_match(s, m, outer_digit) && std::stoll(m[2]) == c) {
        body += ind + m[1].str() + " = kopt_outer\n";
        continue;
      }
      body += std::regex_replace(l, xblock_word, "XTILE") + "\n";  // the tile's shape, not the grid's
    }
    std::string src = fmt::format(
        "def {}({}):\n    # kernelopt pattern axis_reduction: tiles of {} outer row(s) x {} of {} inner positions, "
        "coalesced along the inner axis, reduced over r (stride {}).\n    XTILE: tl.constexpr = {}\n{}",
        ker.entry, templates::entry_params(ker), tile.ob, tile.ib, c, axes->r_stride, xt, body);
    std::vector<int64_t> rbs;
    if (t->looped) {
      // Rows per step so a tile holds 4K (then 8K) elements, fewer where the reduced extent is short.
      for (int64_t target : {4096, 8192}) {
        int64_t rb = std::min(std::max<int64_t>(target / xt, 4), next_pow2(t->rnumel));
        while (t->r_unmasked && t->rnumel % rb != 0 && rb > 1) rb /= 2;
        if (std::find(rbs.begin(), rbs.end(), rb) == rbs.end()) rbs.push_back(rb);
      }
    } else {
      if (xt * t->fixed_block > 8192 && (xt > tile.ib || xt * t->fixed_block > 16384)) continue;  // registers
      rbs.push_back(t->fixed_block);
    }
    for (int64_t rb : rbs) {
      const int64_t elems = xt * rb;
      int warps_added = 0;
      for (int w : {4, 8, 2, 1}) {
        int64_t per_thread = elems / (32 * w);
        // (A tile too small for 4 per thread in one warp still gets one warp.)
        bool tiny = w == 1 && warps_added == 0 && per_thread < 4;
        if ((!tiny && (per_thread < 4 || per_thread > 32)) || warps_added == 2) continue;
        ++warps_added;
        const int stages = t->looped ? 3 : 1;
        json cfg = {{"XBLOCK", xblock}, {"num_warps", w}, {"num_stages", stages}};
        if (t->looped) cfg["R0_BLOCK"] = rb;
        std::string source = templates::replace_entry(ker, t->looped ? templates::with_loop_stages(src, stages) : src);
        Candidate cand = templates::instance(
            ker, k.family, source, cfg,
            fmt::format("axis_reduction, {} outer x {} inner (of {}) per program, {} reduced per step, num_warps={}",
                        tile.ob, tile.ib, c, rb, w));
        cand.origin = "pattern:axis_reduction";
        outc.push_back(std::move(cand));
      }
    }
  }
  if (outc.empty()) return no("no tile fits the reduction");
  return outc;
}

}  // namespace kopt::agents::patterns
