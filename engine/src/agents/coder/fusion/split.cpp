#include "agents/coder/fusion/split.h"

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/fusion/declaration.h"
#include "agents/coder/fusion/pair.h"
#include "agents/coder/fusion/coop_split.h"
#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/fusion/split_loops.h"
#include "agents/coder/fusion/tile_addresses.h"
#include "agents/coder/rewrites/softmax_chunks.h"
#include "agents/coder/templates/body.h"
#include "artifact/pin_config.h"

namespace kopt::agents::fusion {

namespace {

using Line = templates::LogicalLine;

// Rows shorter than this gain nothing from more programs a row.
constexpr int64_t kMinRow = 8192;
// Segments of at most this many elements: a row of 350K is worked on by 6+ programs however many rows.
constexpr int64_t kMaxSegment = 65536;
// At most this many segments a row: the apply kernel reduces its row's partials as one [XBLOCK, segments]
// tile (64 x 64 floats for tiles of 64 columns).
constexpr int64_t kMaxSegments = 64;

// `body` with each division of the second loop by a value the row computed before it, `x = (a / b)`, written as a
// product with one reciprocal a row, `x = (a * kopt_rcp_b)` (within two ulps of the quotient); nothing else changes.
std::string row_reciprocals(const std::string& body, const Loops& L) {
  if (L.loop2.empty()) return body;
  size_t loop = body.rfind("    for r0_offset in ");
  if (loop == std::string::npos) return body;
  static const std::regex div(R"(^(\s+)(\w+) = \((\w+) / (\w+)\)$)");
  std::string before = body.substr(0, loop), inside = body.substr(loop), out, hoisted;
  auto names = [](const std::string& text) {  // what the statements of `text` assign
    std::set<std::string> n;
    for (const templates::LogicalLine& l : templates::logical_lines(text)) n.merge(templates::assigned_names(l.text));
    return n;
  };
  const std::set<std::string> row_values = names(before), loop_values = names(inside);
  std::set<std::string> done;
  std::istringstream lines(inside);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, div) && row_values.count(m[4]) && !loop_values.count(m[4])) {
      if (done.insert(m[4]).second) hoisted += fmt::format("    kopt_rcp_{0} = 1.0 / {0}\n", m[4].str());
      l = fmt::format("{}{} = ({} * kopt_rcp_{})", m[1].str(), m[2].str(), m[3].str(), m[4].str());
    }
    out += l + "\n";
  }
  return hoisted.empty() ? body : before + hoisted + out;
}

// `body` with the second loop in the form of the hand-written apply launch that ran 5.7 ms where the split's own
// took 8.1 (a softmax over 1873 rows of 1.2M bf16, H100, session 38): each `libdevice.exp(a)` there written
// `tl.math.exp2((a) * log2(e))` (ex2.approx.ftz: results below 2^-126 flush to zero) and its loads without the
// evict_first hint. With the row's divisions as one reciprocal a row (row_reciprocals) the loop does per element
// what the probe did; exp2 alone, with the division kept, gained nothing (2.497x against 2.477x).
std::string probe_form(const std::string& body, const Loops& L) {
  if (L.loop2.empty()) return body;
  size_t loop = body.rfind("    for r0_offset in ");
  if (loop == std::string::npos) return body;
  std::string out = body.substr(0, loop), inside = body.substr(loop);
  const std::string from = "libdevice.exp(", hint = ", eviction_policy='evict_first'";
  for (size_t at = inside.find(hint); at != std::string::npos; at = inside.find(hint, at)) inside.erase(at, hint.size());
  for (size_t i = 0; i < inside.size();) {
    size_t at = inside.find(from, i);
    if (at == std::string::npos) {
      out += inside.substr(i);
      break;
    }
    size_t open = at + from.size(), close = open;
    for (int depth = 1; close < inside.size() && depth > 0; ++close)
      depth += inside[close] == '(' ? 1 : inside[close] == ')' ? -1 : 0;
    if (close > inside.size() || inside[close - 1] != ')') return body;
    out += inside.substr(i, at - i) +
           fmt::format("tl.math.exp2(({}) * 1.4426950408889634)", inside.substr(open, close - 1 - open));
    i = close;
  }
  return out;
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
  for (const Line& l : L.mid) b += stored_once(l);
  if (!L.loop2.empty()) b += range;
  for (const Line& l : L.loop2) b += indented(l);
  for (const Line& l : L.tail) b += stored_once(l);
  return {a, b};
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
  Out late;  // one-launch candidates whose segments hold more than L2 keeps: tried after the two-launch split
  Out coop = cooperative(T, L, li, options, &coop_why, &late);
  // The two-launch split's declines keep the one-launch candidates, and say why neither was made.
  auto no_split = [&](std::string w) {
    for (auto& c : late) coop.push_back(std::move(c));
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
    // The 128-row tiles of a row read along and written across also come with the apply loop in the hand-written
    // probe's form: the divisions by the row's values as one reciprocal a row (row_reciprocals), exp2, no eviction
    // hint (probe_form). Not exact: G2 and G3 judge it.
    auto [body_a, body_b_exact] = bodies(L, Plan{nseg, seg});
    // Statistics read along the row keep one max a row, raised once a chunk (softmax_chunks.h): one exp an
    // element where Inductor's online softmax takes two (hand-written, 1.6 ms against 2.3 for the statistics of
    // a softmax over 1873 rows of 1.2M bf16, H100, session 38).
    int chunked = 0;
    if (stats_walk == Walk::along)
      if (auto sc = rewrites::softmax_chunks(body_a, nullptr)) body_a = std::move(sc->source), chunked = sc->accumulators;
    // Grid1D launches cdiv(xnumel, XBLOCK) programs: tiles x segments (the apply kernel without a second loop:
    // tiles alone). The body keeps its own row count.
    const int64_t grid = stats_tiles * st.xblock * nseg,
                  apply_grid = L.loop2.empty() ? apply_tiles * at.xblock : apply_tiles * at.xblock * nseg;
    auto config = [](const Tile& t) {
      return nlohmann::json{{"XBLOCK", t.xblock}, {"R0_BLOCK", t.r0_block}, {"num_warps", t.warps}, {"num_stages", 1}};
    };
    for (bool fast : {false, true}) {
      std::string body_b = fast ? row_reciprocals(body_b_exact, L) : body_b_exact;
      if (fast && (v != 1 || apply_walk != Walk::both || body_b == body_b_exact)) continue;
      if (fast) body_b = probe_form(body_b, L);
      stitch::RegionEdit e;
      e.launches = {li};
      std::vector<stitch::NewLaunch> made;
      int narrowed = 0;
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
        // A widened kernel's addresses as a base a step plus 32-bit offsets in the tile (tile_addresses.h).
        TiledAddresses tiled = tile_addresses(body, cfg["XBLOCK"].get<int64_t>(), cfg["R0_BLOCK"].get<int64_t>());
        narrowed += tiled.rewritten;
        auto launch = split_kernel(T, suffix, tiled.body, ps, mutated, cfg, args, &w);
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
      if (narrowed > 0) description += fmt::format("; {} address(es) as a 64-bit base a step and 32-bit tile offsets", narrowed);
      if (chunked > 0) description += "; the statistics' online softmax with one max a chunk";
      if (fast) description += "; divisions by the row's values as one reciprocal a row, exps as exp2, loads unhinted";
      out.emplace_back(std::move(description), std::move(e));
    }
  }
  if (out.empty()) return no_split("a row too short for two segments");
  for (auto& c : late) out.push_back(std::move(c));
  return out;
}

}  // namespace kopt::agents::fusion
