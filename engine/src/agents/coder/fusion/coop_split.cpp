#include "agents/coder/fusion/coop_split.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/fusion/declaration.h"
#include "agents/coder/fusion/pair.h"
#include "artifact/pin_config.h"
#include "profile/roofline.h"

namespace kopt::agents::fusion {

namespace {

// Polls of the tile's count before a program computes its peers' partials itself: a bound, not a schedule;
// peers that started publish within microseconds.
constexpr int64_t kSpin = 1 << 14;
// Polls without a new ticket anywhere, while a peer has not started, before a program stops waiting.
constexpr int64_t kStall = 64;

// The cooperative form's body: one launch, each program (a tile of rows, a segment of them) runs the
// statistics loop over its segment, stores its partials and counts itself in; once its tile's count is
// full it reduces the tile's partials and runs the second loop over its segment while what its first loop
// read is still in L2.
// Programs take their tile and segment from a ticket (an atomic count of the programs that started), not
// from their program id: the peers a program waits for started before it or start after it and never wait
// on it, so a tile's programs all run once the GPU holds as many programs as a tile has.
// The wait polls one word, the tile's count, with plain (volatile) loads: in session 36's first form every
// program polled each peer's flag with atomics, and a program whose peer had not started yet computed that
// peer's partials itself: a Welford layer norm over 4099 x 262147 fp32 ran 2.6x slower than the compiler's
// kernel, a softmax over 1873 rows of 1.2M with 499 segments 8x slower (H100). A second form, in which a
// tile's last program reduced the partials once for all, waited on that one program: a log-softmax over dim 0
// of 4096 x 269 x 669 fp32 ran 3.99 ms against the first form's 3.54 (the compiler's 5.18).
// It cannot hang: a program waits at most `spin` polls, and stops early when a peer has not started and no
// program anywhere took a ticket during kStall polls (the GPU full of waiting programs, or the Triton
// interpreter, which runs programs one after another); it then computes every other segment's partials
// itself with the same statements (the same bits their owners store, so who computed them does not matter).
// In the interpreter that is the path of every program but each tile's last, so CPU mode checks the
// statements both paths share.
//
// `sync` (int32): [0] the tickets; [1 + t] the programs of tile t that stored their partials. `partials`
// (float32): component-major, row-major within, a segment's column each.
std::string coop_body(const Loops& L, const Plan& p, int64_t spin) {
  const int64_t rn = L.rows * p.nseg;
  std::string b = fmt::format("    NSEG: tl.constexpr = {}\n    SEG: tl.constexpr = {}\n    SB: tl.constexpr = {}\n"
                              "    SPIN: tl.constexpr = {}\n    STALL: tl.constexpr = {}\n",
                              p.nseg, p.seg, next_pow2(p.nseg), spin, kStall);
  b += "    kopt_ticket = tl.atomic_add(sync, 1, sem='relaxed')\n";
  b += "    kopt_tile = kopt_ticket // NSEG\n";
  std::string head = fmt::format("    sseg = kopt_ticket % NSEG\n    xoffset = kopt_tile{} * XBLOCK\n",
                                 L.wide ? ".to(tl.int64)" : "");
  // The statistics of segment `seg` (a name) into the partials, at `indent` more than the kernel's own.
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
  const std::string count = "sync + (1 + kopt_tile)";
  b += "    tl.atomic_add(" + count + ", 1, sem='release')\n";
  b += "    kopt_done = tl.load(" + count + ", volatile=True)\n";
  b += "    kopt_seen = tl.load(sync, volatile=True)\n";
  b += "    kopt_spins = tl.full([], 0, tl.int32)\n    kopt_stall = tl.full([], 0, tl.int32)\n";
  b += "    while (kopt_done < NSEG) & (kopt_spins < SPIN) & ((kopt_stall < STALL) | (kopt_seen >= (kopt_tile + 1) * NSEG)):\n";
  b += "        kopt_done = tl.load(" + count + ", volatile=True)\n";
  b += "        kopt_now = tl.load(sync, volatile=True)\n";
  b += "        kopt_stall = tl.where(kopt_now == kopt_seen, kopt_stall + 1, 0)\n";
  b += "        kopt_seen = kopt_now\n        kopt_spins += 1\n";
  b += "    if tl.atomic_add(" + count + ", 0, sem='acquire') < NSEG:\n";
  b += "        for kopt_seg in range(0, NSEG):\n";
  b += "            if kopt_seg != sseg:\n";
  b += stats("kopt_seg", 12, true);
  // Every thread reads the partials after the count some threads acquired, and after its own fallback stores.
  b += "    tl.debug_barrier()\n";
  // The apply part: the partials of the tile in place of the accumulators (read past L1, which may hold
  // a line from before a peer wrote it), the rest as written, the second loop over the segment.
  b += "    sidx = tl.arange(0, SB)[None, :]\n";
  for (const Accumulator& a : L.accs)
    b += fmt::format("    {} = tl.load(partials + ({} + xindex * NSEG + sidx), xmask & (sidx < NSEG), other={}, "
                     "cache_modifier='.cg')\n",
                     a.name, a.component * rn, a.neutral);
  for (const Line& l : L.mid) b += stored_once(l);
  b += "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n";
  for (const Line& l : L.loop2) b += indented(l);
  for (const Line& l : L.tail) b += stored_once(l);
  return b;
}

}  // namespace

// The cooperative form (coop_body) for kernels whose second loop reads the row again: a tensor of
// several L2s read twice by Inductor's kernel (a row or a tile of columns a program) reaches HBM twice,
// since every program holds a whole row of tiles between its two reads. Segments of about
// SplitOptions::coop_segment_bytes a program keep what the resident programs read (132 SMs x a few
// programs x 64 KiB) within L2 until their second loop reads it again. Tensors below
// SplitOptions::coop_min_bytes a pass (256 MiB) are within a few L2s (50-60 MiB on Hopper): the second
// read finds much of them already.
std::vector<std::pair<std::string, stitch::RegionEdit>> cooperative(const SplitLaunch& T, const Loops& L, size_t li,
                                                                    const SplitOptions& o, std::string* why,
                                                                    std::vector<std::pair<std::string, stitch::RegionEdit>>* late) {
  std::vector<std::pair<std::string, stitch::RegionEdit>> out;
  if (L.loop2.empty()) return *why = "no second loop reads the row again", out;
  int64_t width = 1;
  for (const DeclParam& p : T.params) {  // a type it does not name counts as 4 bytes
    size_t bytes = profile::dtype_size(profile::pointee_dtype(p.type));
    width = std::max<int64_t>(width, bytes ? bytes : 4);
  }
  if (L.rows * L.cols * width < o.coop_min_bytes)
    return *why = fmt::format("{} rows of {} are within a few L2s", L.rows, L.cols), out;
  const Walk w1 = walk(L.loop1), w2 = walk(L.loop2);
  const Walk w = w1 == w2 ? w1 : Walk::both;
  if (o.coop_across_only && w != Walk::across)
    return *why = fmt::format("rows walked {} memory: measured slower than the two-launch split and the kernel's own "
                              "configs (SplitOptions::coop_across_only)",
                              w == Walk::along ? "along" : "along and across"),
           out;
  const bool rows_all_true = all_true(L.prologue, "xmask");
  size_t ncomp = 0;
  for (const Final& fi : L.finals) ncomp += fi.outputs.size();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t v = 0; v < 2; ++v) {
    const Tile t = tiles_for(w)[v];
    if (rows_all_true && L.rows % t.xblock) continue;
    // The partials of a tile are reduced as one [XBLOCK, segments] tile: up to 8192 floats a component.
    const int64_t max_segments = std::min<int64_t>(o.coop_max_segments, 8192 / t.xblock);
    int64_t seg = std::max<int64_t>(t.r0_block, o.coop_segment_bytes / (t.xblock * width));
    seg = std::max(seg, cdiv(cdiv(L.cols, max_segments), t.r0_block) * t.r0_block);
    seg = cdiv(seg, t.r0_block) * t.r0_block;
    const int64_t nseg = cdiv(L.cols, seg);
    if (nseg < 2 || !seen.insert({t.xblock, seg}).second) continue;
    const int64_t tiles = cdiv(L.rows, t.xblock), grid = tiles * t.xblock * nseg, nflags = 1 + tiles;
    const nlohmann::json cfg{{"XBLOCK", t.xblock}, {"R0_BLOCK", t.r0_block}, {"num_warps", t.warps}, {"num_stages", 1}};
    const std::string flags = T.scratch + "_flags";
    std::vector<DeclParam> ps = T.params;
    ps.push_back({"partials", "*fp32", true});
    ps.push_back({"sync", "*i32", true});
    ps.push_back({"xnumel", "i32", grid % 16 == 0});
    ps.push_back({"r0_numel", "i32", divisible(*T.kernel, "r0_numel")});
    ps.push_back({"XBLOCK", "constexpr", false});
    ps.push_back({"R0_BLOCK", "constexpr", false});
    std::string w_;
    auto main = split_kernel(T, "_coop", coop_body(L, Plan{nseg, seg}, kSpin), ps, {"partials", "sync"}, cfg,
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
    // Segments the partials' cap made longer than twice the aim hold more than L2 keeps for the second loop.
    const bool fits = t.xblock * seg * width <= 2 * o.coop_segment_bytes;
    (fits || !late ? out : *late).emplace_back(fmt::format("one launch: {} rows of {} in {} segments of {} ({} programs{}, {}): each program's "
                                 "statistics, its tile's partials, then its segment again from L2, {}",
                                 L.rows, L.cols, nseg, seg, tiles * nseg,
                                 t.xblock > 1 ? fmt::format(", tiles of {} rows", t.xblock) : ", a row each",
                                 walk_words(w), ir::describe_config(cfg)),
                     std::move(e));
  }
  if (out.empty() && (!late || late->empty())) *why = "no tile fits the rows";
  return out;
}

}  // namespace kopt::agents::fusion
