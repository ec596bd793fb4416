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
  // One poll of the tile's flags: how many peers published (2) and how many only started (1).
  auto poll = [](const std::string& pad) {
    return pad + "kopt_flag = tl.atomic_add(flags + (kopt_tile * NSEG + kopt_sidx), 0, mask=kopt_sidx < NSEG, "
                 "sem='acquire')\n" +
           pad + "kopt_done = tl.sum(((kopt_flag == 2) & (kopt_sidx < NSEG)).to(tl.int32))\n" + pad +
           "kopt_started = tl.sum(((kopt_flag == 1) & (kopt_sidx < NSEG)).to(tl.int32))\n";
  };
  b += "    kopt_sidx = tl.arange(0, SB)\n" + poll("    ");
  b += "    kopt_spins = tl.full([], 0, tl.int32)\n";
  b += "    while (kopt_done < NSEG) & (kopt_done + kopt_started == NSEG) & (kopt_spins < SPIN):\n";
  b += poll("        ") + "        kopt_spins += 1\n";
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
  for (const Line& l : L.mid) b += stored_once(l);
  b += "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n";
  for (const Line& l : L.loop2) b += indented(l);
  for (const Line& l : L.tail) b += stored_once(l);
  return b;
}

// Polls of the flags before a program computes its missing peers' partials itself: a bound, not a
// schedule; peers that started publish within microseconds.
constexpr int64_t kSpin = 1 << 14;

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
