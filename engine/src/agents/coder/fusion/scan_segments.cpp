#include "agents/coder/fusion/scan_segments.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

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

using Line = templates::LogicalLine;

// At most this many segments an axis (the apply kernel folds its predecessors' totals one by one).
constexpr int64_t kMaxSegments = 64;
// A segment walks at least this many blocks: shorter ones spend their time on the fold.
constexpr int64_t kMinBlocksPerSegment = 4;

struct Carry {
  std::string name;
  std::string total;  // the block total it takes at the axis' first block
};

struct Scan {
  std::vector<Line> prologue, loop;
  std::vector<Carry> carries;
  std::vector<size_t> update;  // the loop's statements that fold a block total into the carries, in order
  int64_t ynumel = 0, xnumel = 0, length = 0;  // ynumel 0: the 2-D form
  size_t xoffset = 0;                          // the prologue's `xoffset = ...` line
  bool wide = false;                           // the program id is widened to int64
};

bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// `text` with the loop's "not the axis' first block" test made `cond`.
std::string first_block_test(const std::string& text, const std::string& cond) {
  static const std::regex test(R"(\b(roffset|r0_offset) > 0\b)");
  return std::regex_replace(text, test, cond);
}

std::optional<Scan> read_scan(const ir::Kernel& k, bool three_d, std::string* why) {
  auto no = [&](std::string w) -> std::optional<Scan> { return *why = std::move(w), std::nullopt; };
  auto body = entry_body(k, why);
  if (!body) return std::nullopt;
  static const std::regex header(R"(^for r0_offset in (tl\.)?range\(0, r0_numel, R0_BLOCK\):$)");
  Scan s;
  int stage = 0;  // 0 prologue, 1 loop, 2 after it
  for (const Line& l : *body) {
    if (l.indent == 4 && stage == 1) stage = 2;
    if (stage == 2) return no("a statement after the scan loop: " + l.text);
    bool compound = starts(l.text, "for ") || starts(l.text, "if ") || starts(l.text, "while ") ||
                    starts(l.text, "with ");
    if (l.indent == 4 && std::regex_match(l.text, header)) {
      if (stage != 0) return no("more than one loop over the axis");
      stage = 1;
      continue;
    }
    if (compound) return no("a compound statement other than the loop over the axis: " + l.text);
    if (l.indent != (stage == 1 ? 8 : 4)) return no("unexpected indentation");
    (stage == 1 ? s.loop : s.prologue).push_back(l);
  }
  if (stage != 1) return no("no loop over the axis");

  static const std::regex ynumel(R"(^ynumel = (\d+)$)"), xnumel(R"(^xnumel = (\d+)$)"), rnumel(R"(^r0_numel = (\d+)$)"),
      xoff(R"(^xoffset = tl\.program_id\(0\)(\.to\(tl\.int64\))? \* XBLOCK$)"),
      yoff(R"(^yoffset = tl\.program_id\(1\)(\.to\(tl\.int64\))? \* YBLOCK$)"),
      init(R"(^(\w+) = tl\.full\(\[(YBLOCK, )?XBLOCK, 1\], .+, tl\.float32\)$)");
  bool has_x = false, has_y = false;
  std::set<std::string> inits;
  std::set<std::string> prologue_names;
  for (size_t i = 0; i < s.prologue.size(); ++i) {
    const std::string& t = s.prologue[i].text;
    std::smatch m;
    if (std::regex_match(t, m, ynumel)) s.ynumel = std::stoll(m[1]);
    else if (std::regex_match(t, m, xnumel)) s.xnumel = std::stoll(m[1]);
    else if (std::regex_match(t, m, rnumel)) s.length = std::stoll(m[1]);
    else if (std::regex_match(t, m, xoff)) has_x = true, s.xoffset = i, s.wide = m[1].matched;
    else if (std::regex_match(t, m, yoff)) has_y = true;
    else if (std::regex_match(t, m, init) && m[2].matched == three_d) inits.insert(m[1]);
    else if (t.find("tl.program_id") != std::string::npos) return no("a program id used beyond the tile offsets");
    for (const std::string& n : templates::assigned_names(t)) prologue_names.insert(n);
  }
  if (s.xnumel <= 0 || s.length <= 0 || (three_d && s.ynumel <= 0))
    return no("the sizes are not constants of the body (a dynamic shape)");
  if (!has_x || has_y != three_d)
    return no("the tile offsets are not Inductor's `xoffset = tl.program_id(0) * XBLOCK`");

  bool scans = false, stores = false;
  std::set<std::string> totals;  // select_one outputs: a block's last lane
  static const std::regex total(R"(^(\w+) = triton_helpers\.select_one\()"),
      fold(R"(^(\w+) = tl\.where\((roffset|r0_offset) > 0, (\w+), (\w+)\)$)");
  for (size_t i = 0; i < s.loop.size(); ++i) {
    const std::string& t = s.loop[i].text;
    if (t.find("tl.program_id") != std::string::npos) return no("a program id used in the loop");
    if (t.find("tl.atomic") != std::string::npos) return no("an atomic operation");
    scans |= t.find("tl.associative_scan(") != std::string::npos;
    stores |= starts(t, "tl.store(");
    std::smatch m;
    if (std::regex_search(t, m, total)) totals.insert(m[1]);
    for (const std::string& n : templates::assigned_names(t)) {
      if (!prologue_names.count(n)) continue;
      if (!inits.count(n)) return no("the loop reassigns " + n + ", not a carry of the scan");
      if (!std::regex_match(t, m, fold) || !totals.count(m[4]))
        return no("a carry not updated as `tl.where(roffset > 0, folded, block total)`: " + t);
      if (std::any_of(s.carries.begin(), s.carries.end(), [&](const Carry& x) { return x.name == n; }))
        return no("a carry updated twice in the loop: " + n);
      s.carries.push_back({n, m[4]});
      s.update.push_back(i);
    }
  }
  if (!scans) return no("no associative_scan in the loop");
  if (!stores) return no("the loop stores nothing");
  if (s.carries.empty()) return no("no carry between blocks");

  // The fold: the carry updates and what they read back to the block totals, nothing per lane.
  std::set<size_t> slice(s.update.begin(), s.update.end());
  std::vector<size_t> work(s.update.begin(), s.update.end());
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (const std::string& w : templates::words(s.loop[i].text)) {
      if (w == "roffset" || w == "r0_offset" || totals.count(w)) continue;
      for (size_t j = i; j-- > 0;) {
        std::set<std::string> a = templates::assigned_names(s.loop[j].text);
        if (!a.count(w)) continue;
        if (slice.insert(j).second) work.push_back(j);
        break;
      }
    }
  }
  static const std::regex lane(R"(^(r0_base|rbase|r0_index|rindex|r0_mask|rmask|r0_\d+)$)");
  s.update.assign(slice.begin(), slice.end());
  for (size_t i : s.update) {
    const std::string& t = s.loop[i].text;
    for (const char* call : {"tl.load(", "tl.store(", "associative_scan(", "select_one("})
      if (t.find(call) != std::string::npos) return no("the carry update reads the block's lanes: " + t);
    std::string rest = first_block_test(t, "True");
    for (const std::string& w : templates::words(rest))
      if (std::regex_match(w, lane) || w == "roffset" || w == "r0_offset")
        return no("the carry update reads the block's lanes: " + t);
  }
  return s;
}

struct Plan {
  int64_t nseg, seg;
};

// The two kernels' bodies for `p`; `partials` is the scratch parameter.
std::pair<std::string, std::string> bodies(const Scan& S, const Plan& p) {
  const bool three_d = S.ynumel > 0;
  const int64_t cols = three_d ? S.ynumel * S.xnumel : S.xnumel;
  std::string consts = fmt::format("    NSEG: tl.constexpr = {}\n    SEG: tl.constexpr = {}\n", p.nseg, p.seg);
  std::string head = "    sseg = tl.program_id(0) % NSEG\n";
  head += fmt::format("    xoffset = (tl.program_id(0) // NSEG){} * XBLOCK\n", S.wide ? ".to(tl.int64)" : "");
  std::string col = three_d ? fmt::format("yindex * {} + xindex", S.xnumel) : "xindex";
  std::string mask = three_d ? "xmask & ymask" : "xmask";
  auto partial = [&](size_t c, const std::string& seg) {
    return fmt::format("partials + ({} + ({}) * NSEG + {})", c * cols * p.nseg, col, seg);
  };
  std::string range = "    for r0_offset in tl.range(sseg * SEG, tl.minimum(sseg * SEG + SEG, r0_numel), R0_BLOCK):\n";
  auto prologue = [&] {
    std::string out = consts;
    for (size_t i = 0; i < S.prologue.size(); ++i) out += i == S.xoffset ? head : indented(S.prologue[i]);
    return out;
  };
  // Statistics: the loop over the segment without its stores, its first block the segment's first; the
  // carries it ends with stored.
  std::string a = prologue() + range;
  for (const Line& l : S.loop)
    if (!starts(l.text, "tl.store("))
      a += std::string(l.indent, ' ') + first_block_test(l.text, "roffset > sseg * SEG") + "\n";
  for (size_t c = 0; c < S.carries.size(); ++c)
    a += fmt::format("    tl.store({}, {}, {})\n", partial(c, "sseg"), S.carries[c].name, mask);
  // Apply: the earlier segments' totals folded into the carries by the kernel's own update (its
  // temporaries renamed), then the loop over the segment as written.
  std::set<std::string> temps;
  for (size_t i : S.update)
    for (const std::string& n : templates::assigned_names(S.loop[i].text)) temps.insert(n);
  for (const Carry& c : S.carries) temps.erase(c.name), temps.insert(c.total);
  std::string b = prologue() + "    for sj in tl.range(0, sseg):\n";
  for (size_t c = 0; c < S.carries.size(); ++c)
    b += fmt::format("        {} = tl.load({}, {}, other=0.0)\n",
                     templates::rename_words(S.carries[c].total, temps, "_seg"), partial(c, "sj"), mask);
  for (size_t i : S.update)
    b += "        " + templates::rename_words(first_block_test(S.loop[i].text, "sj > 0"), temps, "_seg") + "\n";
  b += range;
  for (const Line& l : S.loop) b += indented(l);
  return {a, b};
}

}  // namespace

std::vector<std::pair<std::string, stitch::RegionEdit>> scan_segment_split(const ir::Artifact& art,
                                                                           const ir::Function& f, size_t li,
                                                                           std::string* why) {
  using Out = std::vector<std::pair<std::string, stitch::RegionEdit>>;
  auto no = [&](std::string w) { return *why = std::move(w), Out{}; };
  const ir::Kernel& k0 = art.kernels.at(f.launches.at(li).kernel);
  const bool three_d = std::any_of(k0.signature.begin(), k0.signature.end(),
                                   [](const ir::KernelParam& p) { return p.name == "ynumel"; });
  std::string w;
  auto target = read_split_launch(art, f, li,
                                  three_d ? std::vector<std::string>{"ynumel", "xnumel", "r0_numel"}
                                          : std::vector<std::string>{"xnumel", "r0_numel"},
                                  &w);
  if (!target) return no(w);
  const SplitLaunch& T = *target;
  const ir::Kernel& k = *T.kernel;
  const ir::Launch& l = *T.launch;
  if (T.constexprs != (three_d ? std::vector<std::string>{"YBLOCK", "XBLOCK", "R0_BLOCK"}
                               : std::vector<std::string>{"XBLOCK", "R0_BLOCK"}))
    return no("not (pointers..., [ynumel,] xnumel, r0_numel, [YBLOCK,] XBLOCK, R0_BLOCK)");
  auto scan = read_scan(k, three_d, &w);
  if (!scan) return no(w);
  const Scan& S = *scan;
  const int64_t sms = T.sms;
  if (arg_of(l, "r0_numel") != std::to_string(S.length)) return no("the launch's axis length is not the body's");
  if (three_d && arg_of(l, "ynumel") != std::to_string(S.ynumel)) return no("the launch's ynumel is not the body's");

  // Rows along memory (loads and stores): a row a program; otherwise tiles of adjacent columns, whose stores
  // are coalesced across the tile too.
  const bool row = !three_d && walk(S.loop) == Walk::along;
  using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;  // YBLOCK, XBLOCK, R0_BLOCK, warps, per SM
  std::vector<Shape> shapes = three_d ? std::vector<Shape>{{32, 32, 4, 8, 4}, {32, 32, 4, 8, 8}, {32, 32, 8, 8, 4}}
                              : row   ? std::vector<Shape>{{1, 1, 1024, 4, 4}, {1, 1, 2048, 8, 4}, {1, 1, 1024, 4, 8}}
                                      : std::vector<Shape>{{1, 64, 8, 4, 4}, {1, 32, 16, 4, 4}, {1, 64, 8, 4, 8}};
  const int64_t cols = three_d ? S.ynumel * S.xnumel : S.xnumel;
  Out out;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen;
  std::string last_why = "no tile shape fits";
  for (auto [yb, xb, r0b, warps, spread] : shapes) {
    if ((all_true(S.prologue, "xmask") && S.xnumel % xb) ||
        (three_d && all_true(S.prologue, "ymask") && S.ynumel % yb))
      continue;
    int64_t xtiles = cdiv(S.xnumel, xb), ytiles = three_d ? cdiv(S.ynumel, yb) : 1, tiles = xtiles * ytiles;
    if (ytiles > 65535) {
      last_why = fmt::format("{} tiles of ynumel exceed the grid's second dimension", ytiles);
      continue;
    }
    if (tiles >= spread * sms) {
      last_why = fmt::format("{} tiles of columns already keep {} SMs busy", tiles, sms);
      continue;
    }
    int64_t nseg = std::min({kMaxSegments, cdiv(spread * sms, tiles), S.length / (kMinBlocksPerSegment * r0b)});
    if (nseg < 2) {
      last_why = fmt::format("an axis of {} too short for two segments of {} blocks of {}", S.length,
                             kMinBlocksPerSegment, r0b);
      continue;
    }
    int64_t seg = cdiv(cdiv(S.length, nseg), r0b) * r0b;
    nseg = cdiv(S.length, seg);
    if (nseg < 2 || !seen.insert({yb, xb, r0b, nseg}).second) continue;
    if (static_cast<int64_t>(S.carries.size()) * cols * nseg * 4 > (int64_t{256} << 20)) {
      last_why = "the segments' totals would take more than 256 MiB";
      continue;
    }
    auto [body_a, body_b] = bodies(S, Plan{nseg, seg});
    nlohmann::json cfg = {{"XBLOCK", xb}, {"R0_BLOCK", r0b}, {"num_warps", warps}, {"num_stages", 1}};
    if (three_d) cfg["YBLOCK"] = yb;
    // The grid's first dimension is cdiv(xnumel, XBLOCK): x tiles x segments; the body keeps its own sizes.
    int64_t programs = xtiles * xb * nseg;
    std::vector<stitch::NewLaunch> made;
    for (auto [suffix, body, mutated] : {std::tuple{"_seg_totals", body_a, std::vector<std::string>{"partials"}},
                                         {"_seg_apply", body_b, std::vector<std::string>{}}}) {
      std::vector<DeclParam> ps = T.params;
      ps.push_back({"partials", "*fp32", true});
      if (three_d) ps.push_back({"ynumel", "i32", S.ynumel % 16 == 0});
      ps.push_back({"xnumel", "i32", programs % 16 == 0});
      ps.push_back({"r0_numel", "i32", divisible(k, "r0_numel")});
      if (three_d) ps.push_back({"YBLOCK", "constexpr", false});
      ps.push_back({"XBLOCK", "constexpr", false});
      ps.push_back({"R0_BLOCK", "constexpr", false});
      std::string sizes_args = three_d ? fmt::format("{}, {}, {}", S.ynumel, programs, S.length)
                                       : fmt::format("{}, {}", programs, S.length);
      std::string args = fmt::format("{}, {}, {}", fmt::join(T.ptr_args, ", "), T.scratch, sizes_args);
      auto launch = split_kernel(T, suffix, body, ps, mutated, cfg, args, &w);
      if (!launch) return no(w);
      made.push_back(std::move(*launch));
    }
    stitch::RegionEdit e;
    e.launches = {li};
    e.before = {made[0]};
    e.kernel = made[1].kernel, e.source = made[1].source, e.args = made[1].args;
    int64_t floats = static_cast<int64_t>(S.carries.size()) * cols * nseg;
    e.scratch = {{T.scratch, fmt::format("{} = {}(({}, ), (1, ), torch.float32)", T.scratch, T.alloc, floats)}};
    std::string tile = three_d ? fmt::format("tiles of {} x {} columns", yb, xb)
                       : row   ? "a row a program"
                               : fmt::format("tiles of {} adjacent columns", xb);
    std::string what = row ? fmt::format("{} rows of {}", cols, S.length)
                           : fmt::format("{} columns over {} steps", cols, S.length);
    out.emplace_back(fmt::format("split the scan of {} into {} segments of {} ({} programs a pass, {}: each "
                                 "segment's total, then the scan), {}",
                                 what, nseg, seg, tiles * nseg, tile, ir::describe_config(cfg)),
                     std::move(e));
  }
  if (out.empty()) return no(last_why);
  return out;
}

}  // namespace kopt::agents::fusion
