#include "agents/coder/templates/scan_split.h"

#include <regex>

#include <fmt/format.h>

#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

const char* const kRowWide[] = {"tl.sum(", "tl.max(", "tl.min(", "tl.argmax(", "tl.argmin(", "tl.cumsum(",
                                "tl.cumprod(", "tl.sort(", "tl.atomic", "tl.debug_barrier(", "tl.gather(",
                                "tl.reshape(", "tl.view(", "tl.trans(", "tl.permute(", "tl.split(", "tl.join(",
                                "tl.flip(", "tl.program_id(", "triton_helpers."};

// One segment per row needs this many rows (programs) to stream at the GPU's bandwidth, and rows
// short enough that one program per row is not a long serial walk.
constexpr int64_t kOneSegmentRows = 32;
constexpr int64_t kOneSegmentMaxRow = int64_t{1} << 22;

std::string indent(const std::vector<std::string>& lines, int n) {
  std::string out;
  for (const std::string& l : lines) out += std::string(n, ' ') + l + "\n";
  return out;
}

// Whether the kernel's loads and stores walk the row at a stride above 1 with x0 at stride 1 (`x0 + 743*r0_1`): a
// scan over an outer axis, one column per program in Inductor's layout, each element its own 32-byte sector. An
// access the other way round (`r0_1 + 588663*x0`: a scan of a transposed input written contiguous) is coalesced
// along the row in a column tile too, as long as the tile's rows span a sector; at least one access must be
// strided along the row, or the row's own layout is contiguous and the row forms below serve it.
bool column_strided(const std::vector<std::string>& pre, const std::vector<std::string>& post) {
  static const std::regex strided(R"(\b(\d+)\*r0_1\b)"), unit_r(R"((^|[^*\w])r0_1\b)"), unit_x(R"((^|[^*\w])x0\b)"),
      strided_x(R"(\b(\d+)\*x0\b)");
  int along_columns = 0;
  for (const auto* part : {&pre, &post})
    for (const std::string& s : *part) {
      if (s.find("tl.load(") == std::string::npos && s.find("tl.store(") == std::string::npos) continue;
      std::smatch m;
      if (std::regex_search(s, m, strided) && std::stoll(m[1]) > 1) {
        std::string rest = std::regex_replace(s, strided, "");
        if (std::regex_search(rest, unit_r) || !std::regex_search(s, unit_x)) return false;
        ++along_columns;
      } else if (std::regex_search(s, m, strided_x) && std::stoll(m[1]) > 1) {
        std::string rest = std::regex_replace(s, strided_x, "");
        if (std::regex_search(rest, unit_x) || !std::regex_search(s, unit_r)) return false;
      } else {
        return false;
      }
    }
  return along_columns > 0;
}

// A statement of the one-segment form made two-dimensional: chunk rows down axis 0, XBLOCK_KOPT adjacent columns
// across axis 1; masks take the column bound, reductions keep their axis for the carry.
std::string two_d(std::string s) {
  static const std::regex index(R"(^(r0_index\w*) = (r0_offset\w*) \+ tl\.arange\(0, R0_BLOCK_KOPT\)\[:\]$)"),
      full_mask(R"(^(r0_mask\w*) = tl\.full\(\[R0_BLOCK_KOPT\], True, tl\.int1\)\[:\]$)"),
      bound_mask(R"(^(r0_mask\w*) = (r0_index\w*) < r0_numel$)"), reduce(R"(tl\.reduce\((\w+), 0, (\w+)\))");
  s = std::regex_replace(s, index, "$1 = $2 + tl.arange(0, R0_BLOCK_KOPT)[:, None]");
  s = std::regex_replace(s, full_mask, "$1 = tl.full([R0_BLOCK_KOPT, 1], True, tl.int1) & xmask");
  s = std::regex_replace(s, bound_mask, "$1 = ($2 < r0_numel) & xmask");
  s = std::regex_replace(s, reduce, "tl.reduce($1, 0, $2, keep_dims=True)");
  // Inductor leaves a load or store unmasked (`None`) when every block divides the row: its one column a
  // program is always in range, but a tile hangs past the last column unless XBLOCK_KOPT divides them, and
  // there an unmasked store lands on the next row's first columns (another column's scan, racing the tile
  // that owns them: two GPU runs of a 3527-column scan differed).
  static const std::regex load_none(R"(tl\.load\(([^,]+), None([,)]))"), store_none(R"(tl\.store\(([^,]+), (\w+), None\))");
  s = std::regex_replace(s, load_none, "tl.load($1, xmask$2");
  s = std::regex_replace(s, store_none, "tl.store($1, $2, xmask)");
  size_t p = 0;
  while ((p = s.find("[R0_BLOCK_KOPT]", p)) != std::string::npos) s.replace(p, 15, "[R0_BLOCK_KOPT, XBLOCK_KOPT]");
  return s;
}

// Column tiles: a program scans XBLOCK_KOPT adjacent columns whole, in chunks of rows, the carry in registers
// (the one-segment form of a row, transposed); loads and stores are coalesced across the columns and the
// workspace goes unused. The split-scan grid keeps one program per column (y) and, with R0_BLOCK pinned to the
// row, one segment (x): programs past the last tile have nothing to do.
std::vector<Candidate> column_tiles(const ir::Kernel& ker, int64_t numel, const std::vector<std::string>& setup,
                                    const std::vector<std::string>& p1_first, const std::vector<std::string>& p2_first,
                                    const std::vector<std::string>& p2_loop, const std::string& prefix,
                                    std::string* why_not) {
  std::vector<std::string> setup2;
  int fixed = 0;
  for (const std::string& s : setup) {
    if (s == "xoffset = tl.program_id(1) * XBLOCK") {
      setup2.push_back("xoffset = tl.program_id(1) * XBLOCK_KOPT"), ++fixed;
    } else if (s == "xindex = tl.full([1], xoffset, tl.int32)") {
      setup2.push_back("xindex = xoffset + tl.arange(0, XBLOCK_KOPT)[None, :]"), ++fixed;
    } else {
      setup2.push_back(s);
    }
  }
  if (fixed != 2) return decline(why_not, "column scan: not Inductor's one-column-a-program x index");
  auto two = [](const std::vector<std::string>& v) {
    std::vector<std::string> out;
    for (const std::string& s : v) out.push_back(two_d(s));
    return out;
  };
  struct Shape {
    int64_t columns, rows;
    int warps, stages;
  };
  std::vector<Candidate> out;
  // Few columns make few programs (743 bf16 columns: 47 of 16): 8 columns (a 32-byte sector of fp32, half of
  // one of bf16) double them; wider tiles trade programs for whole sectors and longer rows per load.
  for (Shape sh : {Shape{32, 128, 4, 2}, Shape{16, 256, 4, 2}, Shape{8, 256, 4, 2}, Shape{64, 64, 4, 2},
                   Shape{32, 256, 8, 2}, Shape{8, 512, 4, 3}, Shape{64, 128, 8, 2}, Shape{16, 128, 4, 3},
                   Shape{32, 64, 4, 3}, Shape{64, 256, 16, 2}}) {
    if (numel <= sh.rows) continue;
    std::string def = fmt::format(
        "def {name}({params}):\n"
        "    # kernelopt template scan_split columns: {xt} adjacent columns a program, each scanned whole in chunks\n"
        "    # of {ch} rows, the carry in registers; loads and stores coalesced across the columns.\n"
        "    R0_BLOCK_KOPT: tl.constexpr = {ch}\n    XBLOCK_KOPT: tl.constexpr = {xt}\n"
        "{setup}    kopt_segment = tl.program_id(0) * R0_BLOCK\n"
        "    if xoffset < xnumel:\n"
        "{p1f}        {prefix} = kopt_total\n"
        "{p2f}        for kopt_chunk in tl.range(R0_BLOCK_KOPT, R0_BLOCK, R0_BLOCK_KOPT):\n{p2l}",
        fmt::arg("name", ker.entry), fmt::arg("params", entry_params(ker)), fmt::arg("xt", sh.columns),
        fmt::arg("ch", sh.rows), fmt::arg("setup", indent(setup2, 4)), fmt::arg("p1f", indent(two(p1_first), 8)),
        fmt::arg("prefix", prefix), fmt::arg("p2f", indent(two(p2_first), 8)),
        fmt::arg("p2l", indent(two(p2_loop), 12)));
    json c = {{"R0_BLOCK", numel}, {"num_warps", sh.warps}, {"num_stages", sh.stages}};
    out.push_back(instance(ker, "scan", replace_entry(ker, def), c,
                           fmt::format("scan_split columns: {} columns a program, chunks of {} rows, {}", sh.columns,
                                       sh.rows, ir::describe_config(c))));
  }
  if (out.empty()) return decline(why_not, "column scan: the row is shorter than every chunk");
  return out;
}

}  // namespace

std::vector<Candidate> scan_split(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "split_scan") return no("not a split scan");
  std::string why;
  auto body = straight_line_body(ker, &why, /*join=*/true);
  if (!body) return no(why);
  static const std::regex r0numel_re(R"(^r0_numel = (\d+)$)");
  static const std::regex reduce_re(R"(^(\w+) = tl\.reduce\((\w+), 0, (\w+)\)$)");
  // The lookback's first argument: the workspace pointer bound before it (torch 2.11), or its expression
  // inline (torch 2.13).
  static const std::regex lookback_re(
      R"(^(\w+) = (triton_helpers\.exclusive_scan_decoupled_lookback(?:_64)?)\((.+), (\w+), tl\.program_id\(0\), (\w+)(.*)\)$)");
  static const std::regex scan_re(R"(^(\w+) = tl\.associative_scan\((\w+), 0, (\w+)\)$)");
  static const std::regex combine_re(R"(^(\w+) = (\w+)\((\w+), (\w+)\)$)");
  static const std::regex where_re(R"(^(\w+) = tl\.where\(roffset == 0, (\w+), (\w+)\)$)");
  int64_t numel = -1;
  int start = -1, reduce = -1, lookback = -1, scan = -1, combine = -1, where = -1;
  std::smatch m;
  std::string total, scan_in, fn, prefix, ws_var, lookback_fn, lookback_rest, scanned, combined;
  std::vector<std::string> setup, ws, pre, post;
  std::string barrier;
  for (int i = 0; i < static_cast<int>(body->size()); ++i) {
    const std::string& s = (*body)[i];
    if (std::regex_match(s, m, r0numel_re)) numel = std::stoll(m[1]);
    if (s == "r0_offset = tl.program_id(0) * R0_BLOCK") {
      start = i;
      continue;
    }
    if (start < 0) {
      setup.push_back(s);
      continue;
    }
    if (reduce >= 0 && lookback < 0 && ws_var.empty() && std::regex_match(s, m, lookback_re) &&
        m[3].str().find("ws_ptr") != std::string::npos) {
      // The workspace expression becomes its own statement (the form older Inductor writes), so both
      // forms build the same candidate.
      const std::string expr = m[3];
      if (expr.find("r0_") != std::string::npos || expr.find("rindex") != std::string::npos)
        return no("`" + s + "` mixes the workspace with the row");
      if (m[4] != total || m[5] != fn) return no("an unexpected lookback: " + s);
      ws_var = "kopt_ws";
      ws.push_back("kopt_ws = " + expr);
      lookback = i, prefix = m[1], lookback_fn = m[2], lookback_rest = m[6];
      continue;
    }
    if (s.find("ws_ptr") != std::string::npos || s.find("tl.num_programs(0)") != std::string::npos) {
      if (s.find("r0_") != std::string::npos || s.find("rindex") != std::string::npos) return no("`" + s + "` mixes the workspace with the row");
      ws.push_back(s);
      if (s.find("ws_ptr") != std::string::npos) ws_var = s.substr(0, s.find(' '));
      continue;
    }
    if (reduce < 0 && std::regex_match(s, m, reduce_re)) {
      reduce = i, total = m[1], scan_in = m[2], fn = m[3];
    } else if (reduce >= 0 && lookback < 0 && std::regex_match(s, m, lookback_re)) {
      if (m[3] != ws_var || m[4] != total || m[5] != fn) return no("an unexpected lookback: " + s);
      lookback = i, prefix = m[1], lookback_fn = m[2], lookback_rest = m[6];
    } else if (lookback >= 0 && scan < 0 && std::regex_match(s, m, scan_re)) {
      if (m[2] != scan_in || m[3] != fn) return no("the scan and the block total differ: " + s);
      scan = i, scanned = m[1];
    } else if (scan >= 0 && combine < 0 && std::regex_match(s, m, combine_re)) {
      if (m[2] != fn || m[3] != prefix || m[4] != scanned) return no("an unexpected prefix combine: " + s);
      combine = i, combined = m[1];
    } else if (combine >= 0 && where < 0 && std::regex_match(s, m, where_re)) {
      if (m[2] != scanned || m[3] != combined) return no("an unexpected first-block select: " + s);
      where = i;
      post.push_back(s);
    } else {
      if (reduce >= 0 && where < 0) return no("`" + s + "` sits inside the lookback sequence");
      if (s == "tl.debug_barrier()") {
        barrier = s;  // a program-wide sync (before an in-place store): kept as is by the column form only
      } else {
        for (const char* bad : kRowWide)
          if (s.find(bad) != std::string::npos) return no(fmt::format("`{}` is not elementwise along the row", s));
      }
      (reduce < 0 ? pre : post).push_back(s);
    }
  }
  if (start < 0 || where < 0 || ws_var.empty() || numel <= 0) return no("not Inductor's split-scan layout");
  const bool columns = column_strided(pre, post);
  if (!columns && !barrier.empty()) return no("`tl.debug_barrier()` is not elementwise along the row");
  // A row whose length no block divides is masked (`r0_index < r0_numel`, loads with `other`): only the last
  // segment's last chunks hold masked lanes, after every valid element, so they reach no valid element's
  // prefix and only the last segment's total, which no later segment reads (the kernel's own argument for its
  // last block). Segments then need not divide the row: the grid is the row over the segment, rounded up.
  const bool masked_row = std::find(pre.begin(), pre.end(), "r0_mask = r0_index < r0_numel") != pre.end();
  if (!columns && !masked_row &&
      std::find(pre.begin(), pre.end(), "r0_mask = tl.full([R0_BLOCK], True, tl.int1)[:]") == pre.end())
    return no("a row mask the template does not read");
  for (const json& l : k.launches) {
    const json& a = l["args"];
    if (a.empty() || a.back().value("value", int64_t{-1}) != numel) return no("a launch's row length differs");
  }
  if (k.launches.empty()) return no("never launched");
  int64_t min_block = ker.inductor_meta.value("min_split_scan_rblock", int64_t{256});

  // Per chunk, the kernel's own statements with the block size meaning the chunk; the first
  // chunk of each phase is written out renamed so the loops carry only the totals.
  std::set<std::string> local = {"r0_offset"};
  for (const auto* part : {&pre, &post})
    for (const std::string& s : *part)
      for (const std::string& n : assigned_names(s)) local.insert(n);
  for (const std::string& n : {scanned, combined}) local.insert(n);
  auto chunked = [&](std::string s) { return rename_words(s, {"R0_BLOCK"}, "_KOPT"); };
  const std::string offset = "r0_offset = kopt_segment + kopt_chunk";
  const std::string red = fmt::format("tl.reduce({}, 0, {})", scan_in, fn);
  std::vector<std::string> p1_first, p1_loop, p2_first, p2_loop;
  auto add = [&](std::vector<std::string>& out, const std::string& s, bool first, const std::string& sfx) {
    std::string t = chunked(s);
    out.push_back(first ? rename_words(t, local, sfx) : t);
  };
  for (bool first : {true, false}) {
    auto& p1 = first ? p1_first : p1_loop;
    auto& p2 = first ? p2_first : p2_loop;
    std::string sfx = first ? "_a0" : "", sfx2 = first ? "_b0" : "";
    const std::string off = first ? "r0_offset = kopt_segment" : offset;
    add(p1, off, first, sfx);
    for (const std::string& s : pre) add(p1, s, first, sfx);
    add(p1, first ? "kopt_total = " + red : fmt::format("kopt_total = {}(kopt_total, {})", fn, red), first, sfx);
    add(p2, off, first, sfx2);
    for (const std::string& s : pre) add(p2, s, first, sfx2);
    add(p2, fmt::format("{} = tl.associative_scan({}, 0, {})", scanned, scan_in, fn), first, sfx2);
    if (first) {
      add(p2, fmt::format("{} = {}({}, {})", combined, fn, prefix, scanned), true, sfx2);
      add(p2, fmt::format("kopt_carry = tl.where(kopt_segment == 0, {0}, {1}({2}, {0}))", red, fn, prefix), true, sfx2);
      for (const std::string& s : post) add(p2, s, true, sfx2);  // the kernel's own first-block select
    } else {
      std::vector<std::string> rest(post.begin() + 1, post.end());
      std::string selected = assigned_names(post.front()).empty() ? "" : *assigned_names(post.front()).begin();
      p2.push_back(fmt::format("{} = {}(kopt_carry, {})", selected, fn, scanned));
      p2.push_back(fmt::format("kopt_carry = {}(kopt_carry, {})", fn, red));
      for (const std::string& s : rest) add(p2, s, false, "");
    }
  }
  std::string lookback_stmt = fmt::format("{} = {}({}, kopt_total, tl.program_id(0), {}{})", prefix, lookback_fn,
                                          ws_var, fn, lookback_rest);
  const std::string params = entry_params(ker);
  if (columns) return column_tiles(ker, numel, setup, p1_first, p2_first, p2_loop, prefix, why_not);
  // One segment per row (R0_BLOCK = the row: a grid of one program per row): no totals pass and no
  // lookback, the carry stays in registers, so each row is read once and written once where the
  // segmented form reads every segment twice. Worth it only with rows enough to keep most SMs
  // streaming; with few long rows the segments' parallelism wins and Inductor's layout stays.
  int64_t rows = -1;
  for (const json& l : k.launches) {
    const json& a = l["args"];
    int64_t r = a.size() >= 2 ? a[a.size() - 2].value("value", int64_t{-1}) : -1;
    rows = rows < 0 ? r : std::min(rows, r);
  }
  const bool one_segment = rows >= kOneSegmentRows && numel >= min_block && numel <= kOneSegmentMaxRow;
  std::vector<Candidate> outc, whole;
  for (int64_t ch : {2048, 4096, 1024}) {
    if (one_segment && (numel % ch == 0 || masked_row) && numel > ch) {
      std::string def1 = fmt::format(
          "def {name}({params}):\n"
          "    # kernelopt template scan_split: one segment per row, in chunks of {ch}; the carry in registers.\n"
          "{setup}    R0_BLOCK_KOPT: tl.constexpr = {ch}\n    kopt_segment = tl.program_id(0) * R0_BLOCK\n{ws}"
          "{p1f}    {prefix} = kopt_total\n"
          "{p2f}    for kopt_chunk in tl.range(R0_BLOCK_KOPT, R0_BLOCK, R0_BLOCK_KOPT):\n{p2l}",
          fmt::arg("name", ker.entry), fmt::arg("params", params), fmt::arg("ch", ch),
          fmt::arg("setup", indent(setup, 4)), fmt::arg("ws", indent(ws, 4)), fmt::arg("p1f", indent(p1_first, 4)),
          fmt::arg("prefix", prefix), fmt::arg("p2f", indent(p2_first, 4)), fmt::arg("p2l", indent(p2_loop, 8)));
      // (The first chunk's total stands in for the prefix the first segment never uses: the kernel's
      // own first-block select takes the local scan there.)
      std::string source1 = replace_entry(ker, def1);
      for (int w : {4, 8}) {
        int64_t per_thread = ch / (32 * w);
        if (per_thread < 4 || per_thread > 16) continue;
        for (int stages : {2, 3}) {
          json c = {{"R0_BLOCK", numel}, {"num_warps", w}, {"num_stages", stages}};
          whole.push_back(instance(ker, "scan", source1, c,
                                   fmt::format("scan_split one segment per row, chunk {}, {}", ch, ir::describe_config(c))));
        }
      }
    }
    std::string def = fmt::format(
        "def {name}({params}):\n"
        "    # kernelopt template scan_split: segments of R0_BLOCK in chunks of {ch}; total, lookback, scan.\n"
        "{setup}    R0_BLOCK_KOPT: tl.constexpr = {ch}\n    kopt_segment = tl.program_id(0) * R0_BLOCK\n{ws}"
        "{p1f}    for kopt_chunk in tl.range(R0_BLOCK_KOPT, R0_BLOCK, R0_BLOCK_KOPT):\n{p1l}"
        "    {lookback}\n"
        "{p2f}    for kopt_chunk in tl.range(R0_BLOCK_KOPT, R0_BLOCK, R0_BLOCK_KOPT):\n{p2l}",
        fmt::arg("name", ker.entry), fmt::arg("params", params), fmt::arg("ch", ch), fmt::arg("setup", indent(setup, 4)),
        fmt::arg("ws", indent(ws, 4)), fmt::arg("p1f", indent(p1_first, 4)), fmt::arg("p1l", indent(p1_loop, 8)),
        fmt::arg("lookback", lookback_stmt), fmt::arg("p2f", indent(p2_first, 4)), fmt::arg("p2l", indent(p2_loop, 8)));
    std::string source = replace_entry(ker, def);
    for (int64_t seg : {16384, 32768, 8192, 65536}) {
      if (seg < min_block || seg <= ch || seg > numel || (numel % seg != 0 && !masked_row)) continue;
      for (int w : {4, 8}) {
        int64_t per_thread = ch / (32 * w);
        if (per_thread < 4 || per_thread > 16) continue;
        json c = {{"R0_BLOCK", seg}, {"num_warps", w}, {"num_stages", 2}};
        outc.push_back(instance(ker, "scan", source, c, fmt::format("scan_split, chunk {}, {}", ch, ir::describe_config(c))));
      }
    }
  }
  outc.insert(outc.begin(), whole.begin(), whole.end());
  if (outc.empty()) return no("no segment and chunk fit the row");
  return outc;
}

}  // namespace kopt::agents::templates
