#include "agents/coder/templates/row_softmax.h"

#include <set>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"
#include "verify/outputs.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

// The two-pass schedules' first-pass step: chunk `x` folded into the running max `m` and sum `s`. A
// chunk whose elements are all -inf so far keeps the sum at 0 (the shift `sm` is 0 there, not
// -inf - -inf).
constexpr const char* kRunningMaxSum =
    "        mn = tl.maximum(m, tl.max(x, 0))\n"
    "        sm = tl.where(mn == float('-inf'), 0.0, mn)\n"
    "        s = s * tl.exp(m - sm) + tl.sum(tl.exp(x - sm), 0)\n"
    "        m = mn\n";

bool contiguous_rows(const json& t, int64_t rows, int64_t cols) {
  if (!is_contiguous(t) || t["shape"].empty() || t["shape"].back().get<int64_t>() != cols) return false;
  int64_t numel = 1;
  for (const json& n : t["shape"]) numel *= n.get<int64_t>();
  return numel == rows * cols;
}

}  // namespace

std::vector<Candidate> row_softmax(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "reduction" && ker.kind != "persistent_reduction") return no("not a reduction kernel");
  // Only the ops of a plain (log-)softmax: anything else fused in would be dropped by the template.
  static const std::set<std::string> allowed = {"prims.prepare_softmax_online", "aten.sub", "aten.exp",
                                                "aten._softmax", "aten._log_softmax", "aten.log",
                                                "aten.amax", "aten.sum", "aten.div",
                                                "prims.convert_element_type"};
  for (const std::string& op : ker.aten_ops)
    if (!allowed.count(op)) return no("the kernel fuses " + op + " with the softmax");
  std::vector<const ir::KernelParam*> runtime;
  bool has_r0_block = false;
  for (const ir::KernelParam& p : ker.signature) {
    if (p.is_constexpr) has_r0_block = has_r0_block || p.name == "R0_BLOCK";
    else runtime.push_back(&p);
  }
  std::vector<size_t> pure = verify::pure_output_args(ker);
  if (pure == std::vector<size_t>{1, 2}) return row_softmax_stats(k, why_not);  // the statistics alone
  if (runtime.size() != 4 || runtime[2]->name != "xnumel" || runtime[3]->name != "r0_numel")
    return no("expected (input, output, xnumel, r0_numel) parameters");
  if (pure != std::vector<size_t>{1}) return no("expected one input pointer and one pure output pointer");
  for (const json& l : k.launches) {
    const json& a = l["args"];
    if (a.size() != 4 || !a[2].contains("value") || !a[3].contains("value")) return no("unexpected launch arguments");
    int64_t rows = a[2]["value"], cols = a[3]["value"];
    if (!contiguous_rows(a[0], rows, cols) || !contiguous_rows(a[1], rows, cols))
      return no("input or output rows are not contiguous");
    static const std::set<std::string> dtypes = {"float32", "float16", "bfloat16"};
    if (!dtypes.count(a[0].value("dtype", "")) || a[0]["dtype"] != a[1]["dtype"]) return no("unsupported dtype");
  }
  if (k.launches.empty()) return no("never launched");
  int64_t rows = k.launches.front()["args"][2]["value"], cols = k.launches.front()["args"][3]["value"];
  for (const json& l : k.launches)
    if (l["args"][3]["value"].get<int64_t>() != cols) return no("launches differ in row length");
  int64_t rb = next_pow2(cols);
  bool log = k.family == "log_softmax";
  bool wide = rows * next_pow2(cols) >= (int64_t{1} << 31);
  // Half-precision rows (two bytes in and out per element) leave an H200 SM about 32 instructions per
  // element at the copy's rate, and tl.exp's non-ftz ex2 takes six of them (a range test and two
  // scalings around MUFU.EX2), div.full three: there the schedules take their arithmetic lean —
  // exp2(x * log2(e) - m * log2(e)) (one FFMA and ex2.approx.ftz; results below 2^-126 flush to 0,
  // and the rounding of m * log2(e) is far inside a bf16 / fp16 output's) and one reciprocal per row.
  bool lean = k.launches.front()["args"][1].value("dtype", "") != "float32";
  auto leaned = [&](std::string text) {
    if (!lean) return text;
    auto swap = [&](const std::string& from, const std::string& to) {
      for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    };
    swap("tl.exp(x - sm)", "tl.math.exp2(x * 1.4426950408889634 - sm * 1.4426950408889634)");
    swap("tl.exp(m - sm)", "tl.math.exp2((m - sm) * 1.4426950408889634)");
    swap("tl.exp(x - m)", "tl.math.exp2(x * 1.4426950408889634 - m * 1.4426950408889634)");
    swap("e / s", "e * (1.0 / s)");
    return text;
  };
  // The schedules below are one text each, filled in with the same names.
  auto render = [&](std::string_view text, int64_t cb = 0) {
    return replace_entry(
        ker, leaned(fmt::format(fmt::runtime(text), fmt::arg("name", ker.entry), fmt::arg("params", entry_params(ker)),
                                fmt::arg("fam", k.family), fmt::arg("rb", rb), fmt::arg("cb", cb),
                                fmt::arg("widen", wide ? ".to(tl.int64)" : ""),
                                fmt::arg("in", runtime[0]->name), fmt::arg("out", runtime[1]->name),
                                fmt::arg("result", log ? "(x - m) - tl.log(s)" : "e / s"),
                                fmt::arg("result2", log ? "(x - m) - ls" : lean ? "tl.math.exp2(x * 1.4426950408889634 - ml) * rs"
                                                                                : "tl.exp(x - m) / s"))));
  };
  // Before a two-pass schedule's second pass, what its output uses once per row: a log-softmax's
  // log-sum, or the lean softmax's shifted max and reciprocal sum.
  const std::string row_stats = log    ? "    ls = tl.log(s)\n"
                                : lean ? "    ml = m * 1.4426950408889634\n    rs = 1.0 / s\n"
                                       : "";
  std::vector<Candidate> outc;
  // Long rows in chunks, read twice: small programs, several per SM, so one program's loads overlap
  // another's reductions, and few enough rows in flight that the second read of a row comes from L2
  // (benchmarks/long_rows.py: bf16 4096x32000 log-softmax 0.145 ms this way, 0.172 ms one pass). The
  // only schedule for rows too long for registers. A chunk whose elements are all -inf so far keeps
  // the running sum at 0 (the shift `sm` is 0 there, not -inf - -inf).
  //
  // The second pass forward, or last chunk first: the chunks read last by the first pass are read
  // again first, so part of a row still finds L2 when the rows in flight outgrow it (H200,
  // benchmarks/long_rows.py reverse: bf16 8192x50304 softmax 0.554 ms against 0.568 forward,
  // 4096x65536 0.350 against 0.373; 32K rows the same or slower, 128K rows slower). Rows of 48K+.
  // Both loops over two stages (the count in the loops, where Triton applies it) screened slower on
  // every long row of the session-11 suite run (the 50K row 0.70 of the baseline's time against 0.62),
  // so the loops stay unpipelined: each chunk is a large load of its own.
  for (const auto& [cb, cfgs] : two_pass_configs(rb, has_r0_block)) {
    for (bool reverse : {false, true}) {
      if (reverse && cols < 49152) continue;
      std::string text = std::string(
          "def {name}({params}):\n"
          "    # kernelopt template row_{fam}, two passes: a running max and sum over chunks of CB, then each\n") +
          (reverse ? "    # chunk, last first, read again (from L2) and written.\n"
                   : "    # chunk read again (from L2) and written.\n") +
          "    CB: tl.constexpr = {cb}\n"
          "    row = tl.program_id(0){widen}\n"
          "    base = row * r0_numel\n"
          "    m = float('-inf')\n"
          "    s = 0.0\n"
          "    for c0 in tl.range(0, r0_numel, CB):\n"
          "        cols = c0 + tl.arange(0, CB)\n"
          "        mask = (cols < r0_numel) & (row < xnumel)\n"
          "        x = tl.load({in} + base + cols, mask, other=float('-inf'), eviction_policy='evict_last').to(tl.float32)\n"
          + kRunningMaxSum + row_stats +
          (reverse ? "    last = (r0_numel - 1) // CB * CB\n" : "") +
          "    for c0 in tl.range(0, r0_numel, CB):\n" +
          (reverse ? "        cols = (last - c0) + tl.arange(0, CB)\n" : "        cols = c0 + tl.arange(0, CB)\n") +
          "        mask = (cols < r0_numel) & (row < xnumel)\n"
          "        x = tl.load({in} + base + cols, mask, other=float('-inf'), eviction_policy='evict_first').to(tl.float32)\n"
          "        y = {result2}\n"
          "        tl.store({out} + base + cols, y.to({out}.dtype.element_ty), mask)\n";
      auto offer = [&](const std::string& source, const char* what) {
        for (const json& c : cfgs)
          outc.push_back(instance(ker, k.family, source, c,
                                  fmt::format("row {} two passes{}{}{}, CB={}, {}", k.family,
                                              reverse ? " (the second last chunk first)" : "", what,
                                              lean ? ", lean arithmetic" : "", cb, ir::describe_config(c))));
      };
      offer(render(text, cb), "");
      if (cols < 49152) continue;
      // The same passes with each chunk's successor loaded before the chunk is reduced or written:
      // a program keeps its next load in flight through its own arithmetic (H200, long_rows.py
      // prefetch: bf16 8192x50304 softmax 0.526 ms against 0.553 reversed; 1024x128256 log-softmax
      // 0.167 against 0.174 forward; 32K rows slower, so rows of 48K+ only). The output stored
      // evict_first, so that it leaves L2 to the rows in flight whose second read is still to come
      // (store_hints.py: the 50K softmax 0.514 ms against 0.527 reversed, 0.566 against 0.581 forward).
      std::string prefetched = std::string(
          "def {name}({params}):\n"
          "    # kernelopt template row_{fam}, two passes with the next chunk prefetched: a running max and sum\n") +
          (reverse ? "    # over chunks of CB, then each chunk, last first, read again (from L2) and written; each pass\n"
                   : "    # over chunks of CB, then each chunk read again (from L2) and written; each pass\n") +
          "    # loads a chunk's successor before it reduces or writes the chunk.\n"
          "    CB: tl.constexpr = {cb}\n"
          "    row = tl.program_id(0){widen}\n"
          "    base = row * r0_numel\n"
          "    live = row < xnumel\n"
          "    r = tl.arange(0, CB)\n"
          "    m = float('-inf')\n"
          "    s = 0.0\n"
          "    nxt = tl.load({in} + base + r, (r < r0_numel) & live, other=float('-inf'), eviction_policy='evict_last')\n"
          "    for c0 in tl.range(0, r0_numel, CB):\n"
          "        x = nxt.to(tl.float32)\n"
          "        cn = c0 + CB + r\n"
          "        nxt = tl.load({in} + base + cn, (cn < r0_numel) & live, other=float('-inf'), eviction_policy='evict_last')\n"
          + kRunningMaxSum + row_stats +
          "    last = (r0_numel - 1) // CB * CB\n" +
          (reverse ? "    first = last\n" : "    first = 0\n") +
          "    nxt = tl.load({in} + base + first + r, (first + r < r0_numel) & live, other=float('-inf'), eviction_policy='evict_first')\n"
          "    for i in tl.range(0, r0_numel, CB):\n" +
          (reverse ? "        c = last - i\n        cn = c - CB + r\n" : "        c = i\n        cn = c + CB + r\n") +
          "        x = nxt.to(tl.float32)\n"
          "        nxt = tl.load({in} + base + cn, (cn >= 0) & (cn < r0_numel) & live, other=float('-inf'), eviction_policy='evict_first')\n"
          "        cols = c + r\n"
          "        mask = (cols < r0_numel) & live\n"
          "        y = {result2}\n"
          "        tl.store({out} + base + cols, y.to({out}.dtype.element_ty), mask, eviction_policy='evict_first')\n";
      offer(render(prefetched, cb), ", the next chunk prefetched");
    }
  }
  if (cols > kMaxSoftmaxRow) {
    if (outc.empty()) return no(fmt::format("rows of {} elements: no chunk size fits", cols));
    return outc;  // a row this long does not fit in registers: the one-pass schedules below cannot hold it
  }
  std::string source = render(
      "def {name}({params}):\n"
      "    # kernelopt template row_{fam}: one pass, each row read once into registers.\n"
      "    RB: tl.constexpr = {rb}\n"
      "    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]\n"
      "    cols = tl.arange(0, RB)[None, :]\n"
      "    mask = (rows < xnumel) & (cols < r0_numel)\n"
      "    offs = rows{widen} * r0_numel + cols\n"
      "    x = tl.load({in} + offs, mask, other=float('-inf'), eviction_policy='evict_first').to(tl.float32)\n"
      "    m = tl.max(x, 1)[:, None]\n"
      "    e = tl.where(mask, tl.exp(x - m), 0.0)\n"
      "    s = tl.sum(e, 1)[:, None]\n"
      "    y = {result}\n"
      "    tl.store({out} + offs, y.to({out}.dtype.element_ty), mask)\n");
  for (const json& c : row_softmax_configs(rows, rb, has_r0_block))
    outc.push_back(instance(ker, k.family, source, c, fmt::format("row {} one-pass{}, {}", k.family, lean ? ", lean arithmetic" : "", ir::describe_config(c))));
  // Long rows: one program per SM at a time (the row fills its registers), so a program's load and
  // its reductions do not overlap. The same one pass with each program taking XBLOCK rows in turn,
  // the loop pipelined (num_stages): the next row's load is in flight while this one is reduced.
  std::vector<json> in_turn = rows_in_turn_configs(rows, rb, has_r0_block);
  std::string in_turn_source = in_turn.empty() ? std::string() : render(
      "def {name}({params}):\n"
      "    # kernelopt template row_{fam}, rows in turn: one pass per row, XBLOCK rows per program in a\n"
      "    # pipelined loop (the next row's load in flight while this one is reduced).\n"
      "    RB: tl.constexpr = {rb}\n"
      "    cols = tl.arange(0, RB)\n"
      "    first = tl.program_id(0) * XBLOCK\n"
      "    for i in tl.range(0, XBLOCK, num_stages=2):\n"
      "        row = first + i\n"
      "        mask = (cols < r0_numel) & (row < xnumel)\n"
      "        offs = row{widen} * r0_numel + cols\n"
      "        x = tl.load({in} + offs, mask, other=float('-inf'), eviction_policy='evict_first').to(tl.float32)\n"
      "        m = tl.max(x, 0)\n"
      "        e = tl.where(mask, tl.exp(x - m), 0.0)\n"
      "        s = tl.sum(e, 0)\n"
      "        y = {result}\n"
      "        tl.store({out} + offs, y.to({out}.dtype.element_ty), mask)\n");
  for (const json& c : in_turn)
    outc.push_back(instance(ker, k.family, in_turn_source, c,
                            fmt::format("row {} rows in turn{}, {}", k.family, lean ? ", lean arithmetic" : "", ir::describe_config(c))));
  if (outc.empty()) return no("no launch config fits the row length");
  return outc;
}

std::vector<std::pair<int64_t, std::vector<json>>> two_pass_configs(int64_t rb, bool has_r0_block) {
  // Rows of 8K elements and up, at least two chunks per row; 8 or 16 elements per thread (the
  // H200 measurements, benchmarks/long_rows.py: 32K and 50K bf16 rows fastest at CB=8192 over 16
  // warps, four programs per SM). Rows of 64K+ also get CB=32768 over 32 warps: 32 elements per
  // thread fill the SM's registers, so one program per SM and fewer rows in flight, which keeps a
  // 128K bf16 row in L2 for its second read (0.176 ms against 0.194 at CB=16384).
  std::vector<std::pair<int64_t, std::vector<json>>> out;
  if (rb < 8192) return out;
  for (int64_t cb : {2048, 4096, 8192, 16384, 32768}) {
    if (cb * 2 > rb || (rb >= 32768 && cb < 4096)) continue;
    std::vector<json> cfgs;
    for (int w : {4, 8, 16, 32}) {
      int64_t per_thread = cb / (32 * w);
      if (cb == 32768 ? w != 32 : per_thread != 8 && per_thread != 16) continue;
      json c = {{"XBLOCK", 1}, {"num_warps", w}, {"num_stages", 1}};
      if (has_r0_block) c["R0_BLOCK"] = cb;
      cfgs.push_back(c);
    }
    if (!cfgs.empty()) out.emplace_back(cb, std::move(cfgs));
  }
  return out;
}

std::vector<json> rows_in_turn_configs(int64_t rows, int64_t rb, bool has_r0_block) {
  // Only rows long enough to hold a program to one per SM (8K+ elements), and enough programs left
  // (256: two waves on an H200's 132 SMs) once each takes XBLOCK rows.
  std::vector<json> out;
  if (rb < 8192) return out;
  for (int64_t xb : {2, 4, 8, 16}) {
    if ((rows + xb - 1) / xb < 256) break;
    for (int w : {8, 16, 32}) {
      int64_t per_thread = rb / (32 * w);
      if (per_thread > 64 || per_thread < 8) continue;
      json c = {{"XBLOCK", xb}, {"num_warps", w}, {"num_stages", 2}};
      if (has_r0_block) c["R0_BLOCK"] = std::min<int64_t>(rb, 4096);
      out.push_back(c);
    }
  }
  return out;
}

std::vector<json> row_softmax_configs(int64_t rows, int64_t rb, bool has_r0_block) {
  // 32 warps (1024 threads, one program per SM) is what lets a 32K fp32 row stay in registers at
  // 32 values per thread.
  std::vector<json> out;
  for (int64_t xb = 1; xb <= 64 && xb <= next_pow2(rows); xb *= 2) {
    int64_t elems = xb * rb;
    if (elems > 16384 && xb > 1) break;
    if (elems < 1024 && xb * 2 <= next_pow2(rows)) continue;  // short rows: take more of them per program
    for (int w : {2, 4, 8, 16, 32}) {
      int64_t per_thread = elems / (32 * w);
      if (per_thread > 64 || per_thread < 2) continue;
      json c = {{"XBLOCK", xb}, {"num_warps", w}, {"num_stages", 1}};
      if (has_r0_block) c["R0_BLOCK"] = std::min<int64_t>(rb, 4096);
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace kopt::agents::templates
