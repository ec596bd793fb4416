#include "agents/coder/fusion/split.h"

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/fusion/declaration.h"
#include "agents/coder/fusion/pair.h"
#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/templates/body.h"
#include "artifact/pin_config.h"

namespace kopt::agents::fusion {

namespace {

// Rows shorter than this gain nothing from more programs a row.
constexpr int64_t kMinRow = 8192;
// Segments of at most this many elements: a row of 350K is worked on by 6+ programs however many rows.
constexpr int64_t kMaxSegment = 65536;
// At most this many segments a row: the apply kernel reduces its row's partials as one [XBLOCK, segments]
// tile (64 x 64 floats for tiles of 64 columns).
constexpr int64_t kMaxSegments = 64;

using Line = templates::LogicalLine;
using templates::split_args;

// Whether a statement mentions the variable `name` (attributes and string literals are no names).
bool mentions(const std::string& text, const std::string& name) {
  std::vector<std::string> w = templates::words(text);
  return std::find(w.begin(), w.end(), name) != w.end();
}

// `tl.store(ptr, value, mask)` stored only where `guard` holds as well.
std::string guarded_store(const std::string& text, const std::string& guard) {
  size_t open = text.find('('), close = text.rfind(')');
  std::vector<std::string> args = split_args(text.substr(open + 1, close - open - 1));
  if (args.size() < 3) args.push_back(guard);
  else if (args[2] == "None") args[2] = guard;  // Inductor's unmasked store
  else args[2] = fmt::format("({}) & ({})", args[2], guard);
  return fmt::format("tl.store({})", fmt::join(args, ", "));
}

struct Accumulator {
  std::string name, neutral;  // the value of a lane that holds nothing yet
  size_t line = 0;            // its initialization, in the prologue
  size_t component = 0;       // its partials' place in the scratch
};

// A final statement: reduces accumulators over dim 1 into one value each (positionally).
struct Final {
  size_t line = 0;                   // in mid
  std::vector<std::string> outputs;  // the values, [XBLOCK] or (two_d) [XBLOCK, 1]
  std::vector<std::string> accs;
  bool two_d = false;
};

struct Loops {
  std::vector<Line> prologue, loop1, mid, loop2, tail;
  std::vector<Accumulator> accs;
  std::vector<Final> finals;
  int64_t rows = 0, cols = 0;
  size_t xoffset = 0;  // the prologue's `xoffset = ...` line
  bool wide = false;   // the program id is widened to int64
};

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

struct Plan {
  int64_t nseg, seg;
};

// A launch's tile: XBLOCK rows, R0_BLOCK elements of each a step.
struct Tile {
  int64_t xblock, r0_block, warps;
};

// The variants' tiles for a walk, and the programs per SM each variant aims at.
constexpr int64_t kSpread[3] = {4, 4, 8};
std::array<Tile, 3> tiles_for(Walk w) {
  switch (w) {
    case Walk::along: return {Tile{1, 2048, 8}, Tile{1, 1024, 4}, Tile{1, 2048, 8}};
    case Walk::across: return {Tile{64, 32, 8}, Tile{32, 64, 8}, Tile{64, 32, 8}};
    case Walk::both: break;
  }
  // Both: a store across memory is whole 32-byte sectors from 16 rows of 2-byte values; a load along it, from
  // 64 or more values a row.
  return {Tile{32, 64, 8}, Tile{16, 128, 8}, Tile{64, 64, 8}};
}

const char* walk_words(Walk w) {
  return w == Walk::along ? "along memory" : w == Walk::across ? "across memory" : "read along and written across";
}

// The two kernels' bodies for `p`; `partials` is the scratch parameter.
std::pair<std::string, std::string> bodies(const Loops& L, const Plan& p) {
  int64_t rn = L.rows * p.nseg;
  std::string consts = fmt::format("    NSEG: tl.constexpr = {}\n    SEG: tl.constexpr = {}\n", p.nseg, p.seg);
  std::string head = "    sseg = tl.program_id(0) % NSEG\n";
  head += fmt::format("    xoffset = (tl.program_id(0) // NSEG){} * XBLOCK\n", L.wide ? ".to(tl.int64)" : "");
  // Without a second loop the apply kernel only reduces the partials and stores each row's results: a
  // program per row tile (its launch's grid has no segments).
  std::string apply_head = L.loop2.empty() ? fmt::format("    sseg = 0\n    xoffset = tl.program_id(0){} * XBLOCK\n",
                                                         L.wide ? ".to(tl.int64)" : "")
                                           : head;
  std::string range = "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n";
  // Statistics: the prologue, the first loop over the segment, the final reductions, the partials stored.
  std::string a = consts;
  for (size_t i = 0; i < L.prologue.size(); ++i) a += i == L.xoffset ? head : indented(L.prologue[i]);
  a += range;
  for (const Line& l : L.loop1) a += indented(l);
  size_t c = 0;
  for (const Final& f : L.finals) {
    a += indented(L.mid[f.line]);
    for (const std::string& o : f.outputs)
      a += fmt::format("    tl.store(partials + ({} + xindex * NSEG + sseg), {}, xmask)\n", c++ * rn,
                       f.two_d ? o : o + "[:, None]");
  }
  // Apply: the partials of the row in place of the accumulators, the rest as written, the second loop
  // over the segment, what is stored once a row stored by segment 0.
  std::string b = consts + fmt::format("    SB: tl.constexpr = {}\n", next_pow2(p.nseg));
  for (size_t i = 0; i < L.prologue.size(); ++i) {
    auto acc = std::find_if(L.accs.begin(), L.accs.end(), [&](const Accumulator& x) { return x.line == i; });
    if (i == L.xoffset) b += apply_head + "    sidx = tl.arange(0, SB)[None, :]\n";
    else if (acc == L.accs.end()) b += indented(L.prologue[i]);
    else
      b += fmt::format("    {} = tl.load(partials + ({} + xindex * NSEG + sidx), xmask & (sidx < NSEG), other={})\n",
                       acc->name, acc->component * rn, acc->neutral);
  }
  auto once = [](const Line& l) {
    if (l.text.rfind("tl.store(", 0) != 0) return indented(l);
    return std::string(l.indent, ' ') + guarded_store(l.text, "sseg == 0") + "\n";
  };
  for (const Line& l : L.mid) b += once(l);
  if (!L.loop2.empty()) b += range;
  for (const Line& l : L.loop2) b += indented(l);
  for (const Line& l : L.tail) b += once(l);
  return {a, b};
}

// The cooperative form's body: one launch, each program (a tile of rows, a segment of them) runs the
// statistics loop over its segment, publishes the partials, waits for the other segments of its tile,
// reduces them and runs the second loop over its segment while what the first loop read is still in L2.
// The wait cannot hang: flags say which peers started (1) and which published (2); a program waits only
// while every peer that has not published has started, at most `spin` polls, and then computes the
// missing segments' partials itself with the same statements (bit for bit what their owners store). In
// the Triton interpreter, which runs programs one after another, later peers never started: their
// partials are always computed that way, so CPU mode checks the statements both paths share.
std::string coop_body(const Loops& L, const Plan& p, int64_t spin) {
  int64_t rn = L.rows * p.nseg;
  std::string b = fmt::format("    NSEG: tl.constexpr = {}\n    SEG: tl.constexpr = {}\n    SB: tl.constexpr = {}\n"
                              "    SPIN: tl.constexpr = {}\n",
                              p.nseg, p.seg, next_pow2(p.nseg), spin);
  b += "    kopt_tile = tl.program_id(0) // NSEG\n";
  b += "    sseg = tl.program_id(0) % NSEG\n";
  b += "    tl.atomic_xchg(flags + (kopt_tile * NSEG + sseg), 1, sem='relaxed')\n";
  std::string head = fmt::format("    sseg = tl.program_id(0) % NSEG\n    xoffset = kopt_tile{} * XBLOCK\n",
                                 L.wide ? ".to(tl.int64)" : "");
  // The statistics of segment `seg` (a name), at `indent` more than the kernel's own.
  auto stats = [&](const std::string& seg, size_t indent, bool inits) {
    std::string pad(indent, ' '), out;
    if (inits)
      for (const Accumulator& a : L.accs) out += pad + indented(L.prologue[a.line]);
    out += pad + fmt::format("    for r0_offset in tl.range({0} * SEG, tl.minimum({0} * SEG + SEG, r0_numel), R0_BLOCK):\n",
                             seg);
    for (const Line& l : L.loop1) out += pad + indented(l);
    size_t c = 0;
    for (const Final& f : L.finals) {
      out += pad + indented(L.mid[f.line]);
      for (const std::string& o : f.outputs)
        out += pad + fmt::format("    tl.store(partials + ({} + xindex * NSEG + {}), {}, xmask)\n", c++ * rn, seg,
                                 f.two_d ? o : o + "[:, None]");
    }
    return out;
  };
  for (size_t i = 0; i < L.prologue.size(); ++i) b += i == L.xoffset ? head : indented(L.prologue[i]);
  b += stats("sseg", 0, false);
  b += "    tl.debug_barrier()\n";
  b += "    tl.atomic_xchg(flags + (kopt_tile * NSEG + sseg), 2, sem='release')\n";
  b += "    kopt_sidx = tl.arange(0, SB)\n";
  b += "    kopt_flag = tl.atomic_add(flags + (kopt_tile * NSEG + kopt_sidx), 0, mask=kopt_sidx < NSEG, sem='acquire')\n";
  b += "    kopt_done = tl.sum((kopt_flag == 2).to(tl.int32))\n";
  b += "    kopt_started = tl.sum((kopt_flag == 1).to(tl.int32))\n";
  b += "    kopt_spins = tl.full([], 0, tl.int32)\n";
  b += "    while (kopt_done < NSEG) & (kopt_done + kopt_started == NSEG) & (kopt_spins < SPIN):\n";
  b += "        kopt_flag = tl.atomic_add(flags + (kopt_tile * NSEG + kopt_sidx), 0, mask=kopt_sidx < NSEG, "
       "sem='acquire')\n";
  b += "        kopt_done = tl.sum((kopt_flag == 2).to(tl.int32))\n";
  b += "        kopt_started = tl.sum((kopt_flag == 1).to(tl.int32))\n";
  b += "        kopt_spins += 1\n";
  b += "    if kopt_done < NSEG:\n";
  b += "        for kopt_seg in range(0, NSEG):\n";
  b += "            if tl.atomic_add(flags + (kopt_tile * NSEG + kopt_seg), 0, sem='acquire') != 2:\n";
  b += stats("kopt_seg", 12, true);
  // Every thread reads the partials after the flags some threads acquired, and after its own fallback stores.
  b += "    tl.debug_barrier()\n";
  // The apply part: the partials of the tile in place of the accumulators (read past L1, which may hold
  // a line from before a peer wrote it), the rest as written, the second loop over the segment.
  b += "    sidx = tl.arange(0, SB)[None, :]\n";
  for (size_t i = 0; i < L.prologue.size(); ++i) {
    auto acc = std::find_if(L.accs.begin(), L.accs.end(), [&](const Accumulator& x) { return x.line == i; });
    if (acc == L.accs.end()) continue;
    b += fmt::format("    {} = tl.load(partials + ({} + xindex * NSEG + sidx), xmask & (sidx < NSEG), other={}, "
                     "cache_modifier='.cg')\n",
                     acc->name, acc->component * rn, acc->neutral);
  }
  auto once = [](const Line& l) {
    if (l.text.rfind("tl.store(", 0) != 0) return indented(l);
    return std::string(l.indent, ' ') + guarded_store(l.text, "sseg == 0") + "\n";
  };
  for (const Line& l : L.mid) b += once(l);
  b += "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n";
  for (const Line& l : L.loop2) b += indented(l);
  for (const Line& l : L.tail) b += once(l);
  return b;
}


// What a pointer parameter's elements take (`*bf16`: 2 bytes); 4 for what it does not name.
int64_t element_bytes(const std::string& dtype) {
  if (dtype == "*fp64" || dtype == "*i64") return 8;
  if (dtype == "*bf16" || dtype == "*fp16" || dtype == "*i16") return 2;
  if (dtype == "*i8" || dtype == "*u8" || dtype == "*i1") return 1;
  return 4;
}

// The cooperative form (coop_body) for kernels whose second loop reads the row again: a tensor of
// several L2s read twice by Inductor's kernel (a row or a tile of columns a program) reaches HBM twice,
// since every program holds a whole row of tiles between its two reads. Segments of about
// SplitOptions::coop_segment_bytes a program keep what the resident programs read (132 SMs x a few
// programs x 64 KiB) within L2 until their second loop reads it again.
// Polls of the flags before a program computes its missing peers' partials itself: a bound, not a
// schedule; peers that started publish within microseconds.
constexpr int64_t kSpin = 1 << 14;

// Tensors below SplitOptions::coop_min_bytes a pass (256 MiB) are within a few L2s (50-60 MiB on
// Hopper): the second read finds much of them already.
std::vector<std::pair<std::string, stitch::RegionEdit>> cooperative(const SplitLaunch& T, const Loops& L, size_t li,
                                                                    const SplitOptions& o, std::string* why) {
  std::vector<std::pair<std::string, stitch::RegionEdit>> out;
  if (L.loop2.empty()) return *why = "no second loop reads the row again", out;
  int64_t width = 1;
  for (const DeclParam& p : T.params) width = std::max(width, element_bytes(p.type));
  if (L.rows * L.cols * width < o.coop_min_bytes)
    return *why = fmt::format("{} rows of {} are within a few L2s", L.rows, L.cols), out;
  const Walk w1 = walk(L.loop1), w2 = walk(L.loop2);
  const Walk w = w1 == w2 ? w1 : Walk::both;
  const bool rows_all_true = all_true(L.prologue, "xmask");
  size_t ncomp = 0;
  for (const Final& fi : L.finals) ncomp += fi.outputs.size();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t v = 0; v < 2; ++v) {
    const Tile t = tiles_for(w)[v];
    if (rows_all_true && L.rows % t.xblock) continue;
    // The partials of a tile are reduced as one [XBLOCK, segments] tile: up to 8192 floats a component (a row a
    // program: up to 1024 segments, so a row of 1.2M bf16 still splits into segments of about 64 KiB).
    const int64_t max_segments = std::min<int64_t>(1024, 8192 / t.xblock);
    int64_t seg = std::max<int64_t>(t.r0_block, o.coop_segment_bytes / (t.xblock * width));
    seg = std::max(seg, cdiv(cdiv(L.cols, max_segments), t.r0_block) * t.r0_block);
    seg = cdiv(seg, t.r0_block) * t.r0_block;
    const int64_t nseg = cdiv(L.cols, seg);
    if (nseg < 2 || !seen.insert({t.xblock, seg}).second) continue;
    const int64_t tiles = cdiv(L.rows, t.xblock), grid = tiles * t.xblock * nseg, nflags = tiles * nseg;
    const nlohmann::json cfg{{"XBLOCK", t.xblock}, {"R0_BLOCK", t.r0_block}, {"num_warps", t.warps}, {"num_stages", 1}};
    const std::string flags = T.scratch + "_flags";
    std::vector<DeclParam> ps = T.params;
    ps.push_back({"partials", "*fp32", true});
    ps.push_back({"flags", "*i32", true});
    ps.push_back({"xnumel", "i32", grid % 16 == 0});
    ps.push_back({"r0_numel", "i32", divisible(*T.kernel, "r0_numel")});
    ps.push_back({"XBLOCK", "constexpr", false});
    ps.push_back({"R0_BLOCK", "constexpr", false});
    std::string w_;
    auto main = split_kernel(T, "_coop", coop_body(L, Plan{nseg, seg}, kSpin), ps, {"partials", "flags"}, cfg,
                             fmt::format("{}, {}, {}, {}, {}", fmt::join(T.ptr_args, ", "), T.scratch, flags, grid,
                                         L.cols),
                             &w_);
    // The flags start at zero each call: a launch before stores them (the scratch is not zeroed).
    std::string zero_body = fmt::format(
        "    xnumel = {}\n    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n"
        "    xmask = xindex < xnumel\n    tl.store(flags + xindex, tl.full([XBLOCK, 1], 0, tl.int32), xmask)\n",
        nflags);
    auto zero = split_kernel(T, "_coop_flags", zero_body,
                             {{"flags", "*i32", true}, {"xnumel", "i32", false}, {"r0_numel", "i32", false},
                              {"XBLOCK", "constexpr", false}, {"R0_BLOCK", "constexpr", false}},
                             {"flags"}, nlohmann::json{{"XBLOCK", 1024}, {"R0_BLOCK", 1}, {"num_warps", 4}, {"num_stages", 1}},
                             fmt::format("{}, {}, 1", flags, nflags), &w_);
    if (!main || !zero) return *why = w_, std::vector<std::pair<std::string, stitch::RegionEdit>>{};
    stitch::RegionEdit e;
    e.launches = {li};
    e.before = {std::move(*zero)};
    e.kernel = main->kernel, e.source = main->source, e.args = main->args;
    e.scratch = {{T.scratch, fmt::format("{} = {}(({}, ), (1, ), torch.float32)", T.scratch, T.alloc,
                                         static_cast<int64_t>(ncomp) * L.rows * nseg)},
                 {flags, fmt::format("{} = {}(({}, ), (1, ), torch.int32)", flags, T.alloc, nflags)}};
    out.emplace_back(fmt::format("one launch: {} rows of {} in {} segments of {} ({} programs{}, {}): each program's "
                                 "statistics, its tile's partials, then its segment again from L2, {}",
                                 L.rows, L.cols, nseg, seg, tiles * nseg,
                                 t.xblock > 1 ? fmt::format(", tiles of {} rows", t.xblock) : ", a row each",
                                 walk_words(w), ir::describe_config(cfg)),
                     std::move(e));
  }
  if (out.empty()) *why = "no tile fits the rows";
  return out;
}
}  // namespace

std::vector<std::pair<std::string, stitch::RegionEdit>> segment_split(const ir::Artifact& art, const ir::Function& f,
                                                                      size_t li, std::string* why,
                                                                      const SplitOptions& options) {
  using Out = std::vector<std::pair<std::string, stitch::RegionEdit>>;
  auto no = [&](std::string w) { return *why = std::move(w), Out{}; };
  std::string w;
  auto target = read_split_launch(art, f, li, {"xnumel", "r0_numel"}, &w);
  if (!target) return no(w);
  const SplitLaunch& T = *target;
  const ir::Kernel& k = *T.kernel;
  if (T.constexprs != std::vector<std::string>{"XBLOCK", "R0_BLOCK"})
    return no("not (pointers..., xnumel, r0_numel, XBLOCK, R0_BLOCK)");
  auto loops = read_loops(k, &w);
  if (!loops) return no(w);
  const Loops& L = *loops;
  const int64_t sms = T.sms;
  if (arg_of(*T.launch, "r0_numel") != std::to_string(L.cols)) return no("the launch's row length is not the body's");
  std::string coop_why;
  Out coop = cooperative(T, L, li, options, &coop_why);
  // The two-launch split's declines keep the one-launch candidates, and say why neither was made.
  auto no_split = [&](std::string w) {
    if (!coop.empty()) return coop;
    return no(fmt::format("{}; in one launch: {}", w, coop_why));
  };
  if (L.cols < kMinRow) return no_split(fmt::format("rows of {} elements: too short to split", L.cols));
  // Rows along memory: a program a row, enough of them from 4 a SM. Rows across memory: tiles of 32 or 64
  // adjacent rows, each walking the whole column twice; a few tiles a SM leave it waiting on loads (22760
  // columns of 32768 fp16 in 356 tiles ran at 2.4x the bytes' time), so they split below 8 tiles a SM.
  // The statistics launch walks as its loop's loads do, the apply launch as its loop's loads and stores.
  const Walk stats_walk = walk(L.loop1), apply_walk = L.loop2.empty() ? stats_walk : walk(L.loop2);
  const bool rows_along = stats_walk == Walk::along && apply_walk == Walk::along;
  if (L.rows >= (rows_along ? 4 : 8 * 32) * sms)
    return no_split(fmt::format("{} rows already keep {} SMs busy", L.rows, sms));

  size_t ncomp = 0;
  for (const Final& fi : L.finals) ncomp += fi.outputs.size();

  Out out = std::move(coop);
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen;
  const bool rows_all_true = all_true(L.prologue, "xmask");  // tiles must divide the rows then
  for (size_t v = 0; v < 3; ++v) {
    const Tile st = tiles_for(stats_walk)[v], at = L.loop2.empty() ? st : tiles_for(apply_walk)[v];
    const int64_t spread = kSpread[v];
    // Segments enough for the apply launch's tiles (the heavier pass) to give `spread` programs a SM.
    int64_t stats_tiles = cdiv(L.rows, st.xblock), apply_tiles = cdiv(L.rows, at.xblock);
    if (apply_tiles >= spread * sms) continue;  // these tiles already keep the SMs busy
    int64_t nseg = std::min(kMaxSegments, std::max(cdiv(spread * sms, apply_tiles), cdiv(L.cols, kMaxSegment)));
    const int64_t step = std::max(st.r0_block, at.r0_block);  // powers of two: a segment is whole blocks of both
    int64_t seg = cdiv(cdiv(L.cols, nseg), step) * step;
    nseg = cdiv(L.cols, seg);
    if ((rows_all_true && (L.rows % st.xblock || L.rows % at.xblock)) || nseg < 2 ||
        !seen.insert({st.xblock, at.xblock, at.r0_block, nseg}).second)
      continue;
    auto [body_a, body_b] = bodies(L, Plan{nseg, seg});
    stitch::RegionEdit e;
    e.launches = {li};
    // Grid1D launches cdiv(xnumel, XBLOCK) programs: tiles x segments (the apply kernel without a second loop:
    // tiles alone). The body keeps its own row count.
    int64_t grid = stats_tiles * st.xblock * nseg,
            apply_grid = L.loop2.empty() ? apply_tiles * at.xblock : apply_tiles * at.xblock * nseg;
    auto config = [](const Tile& t) {
      return nlohmann::json{{"XBLOCK", t.xblock}, {"R0_BLOCK", t.r0_block}, {"num_warps", t.warps}, {"num_stages", 1}};
    };
    std::vector<stitch::NewLaunch> made;
    for (auto [suffix, body, mutated, programs, cfg] :
         {std::tuple{"_seg_stats", body_a, std::vector<std::string>{"partials"}, grid, config(st)},
          {"_seg_apply", body_b, std::vector<std::string>{}, apply_grid, config(at)}}) {
      std::vector<DeclParam> ps = T.params;
      ps.push_back({"partials", "*fp32", true});
      ps.push_back({"xnumel", "i32", programs % 16 == 0});
      ps.push_back({"r0_numel", "i32", divisible(k, "r0_numel")});
      ps.push_back({"XBLOCK", "constexpr", false});
      ps.push_back({"R0_BLOCK", "constexpr", false});
      std::string args = fmt::format("{}, {}, {}, {}", fmt::join(T.ptr_args, ", "), T.scratch, programs, L.cols);
      auto launch = split_kernel(T, suffix, body, ps, mutated, cfg, args, &w);
      if (!launch) return no(w);
      made.push_back(std::move(*launch));
    }
    e.before = {made[0]};
    e.kernel = made[1].kernel, e.source = made[1].source, e.args = made[1].args;
    int64_t floats = static_cast<int64_t>(ncomp) * L.rows * nseg;
    e.scratch = {{T.scratch, fmt::format("{} = {}(({}, ), (1, ), torch.float32)", T.scratch, T.alloc, floats)}};
    std::string then = L.loop2.empty() ? "each row's results" : "the row";
    std::string description;
    if (st.xblock == at.xblock && st.r0_block == at.r0_block)
      description = fmt::format("split {} rows of {} into {} segments of {} ({} programs a pass{}: statistics, then "
                                "{}), {}",
                                L.rows, L.cols, nseg, seg, stats_tiles * nseg,
                                st.xblock > 1 ? fmt::format(", tiles of {} adjacent rows", st.xblock) : "", then,
                                ir::describe_config(config(st)));
    else
      description = fmt::format("split {} rows of {} into {} segments of {} (statistics: {} programs, {}; then {}: {} "
                                "programs, tiles of {} rows {}), {}; then {}",
                                L.rows, L.cols, nseg, seg, stats_tiles * nseg,
                                st.xblock > 1 ? fmt::format("tiles of {} rows", st.xblock) : "a row each", then,
                                apply_grid / at.xblock, at.xblock, walk_words(apply_walk),
                                ir::describe_config(config(st)), ir::describe_config(config(at)));
    out.emplace_back(std::move(description), std::move(e));
  }
  if (out.empty()) return no_split("a row too short for two segments");
  return out;
}

}  // namespace kopt::agents::fusion
