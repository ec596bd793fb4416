#include "agents/coder/templates/pool2d.h"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/columns.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"
#include "verify/outputs.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

struct PoolParams {
  bool max = true;
  int64_t k = 0, s = 0, p = 0;
  bool count_include_pad = true;
};

// "[3, 3]" pairs must be square for this template.
bool square(const std::smatch& m, int a, int b, int64_t* out) {
  if (!m[a].matched) return false;
  int64_t x = std::stoll(m[a]), y = std::stoll(m[b]);
  if (x != y) return false;
  *out = x;
  return true;
}

std::optional<PoolParams> parse(const std::string& comment, std::string* why) {
  // prims._low_memory_max_pool_with_offsets(x, kernel, stride, padding, dilation, ceil_mode)
  static const std::regex maxre(
      R"(_low_memory_max_pool_with_offsets\.default\]\(args = \(%\w+, \[(\d+), (\d+)\], \[(\d+), (\d+)\], \[(\d+), (\d+)\], \[(\d+), (\d+)\], (True|False)\))");
  // aten.avg_pool2d(x, kernel, stride=[], padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)
  static const std::regex avgre(
      R"(aten\.avg_pool2d\.default\]\(args = \(%\w+, \[(\d+), (\d+)\](?:, \[(\d+), (\d+)\])?(?:, \[(\d+), (\d+)\])?(?:, (True|False))?(?:, (True|False))?(?:, (\w+))?\))");
  std::smatch m;
  PoolParams pp;
  if (std::regex_search(comment, m, maxre)) {
    int64_t dil = 0;
    if (!square(m, 1, 2, &pp.k) || !square(m, 3, 4, &pp.s) || !square(m, 5, 6, &pp.p) || !square(m, 7, 8, &dil))
      return *why = "non-square pooling window", std::nullopt;
    if (dil != 1) return *why = "dilated pooling", std::nullopt;
    if (m[9] == "True") return *why = "ceil_mode pooling", std::nullopt;
    return pp;
  }
  if (std::regex_search(comment, m, avgre)) {
    pp.max = false;
    if (!square(m, 1, 2, &pp.k)) return *why = "non-square pooling window", std::nullopt;
    if (!m[3].matched) pp.s = pp.k;  // stride defaults to the kernel size
    else if (!square(m, 3, 4, &pp.s)) return *why = "non-square stride", std::nullopt;
    if (m[5].matched && !square(m, 5, 6, &pp.p)) return *why = "non-square padding", std::nullopt;
    if (m[7].matched && m[7] == "True") return *why = "ceil_mode pooling", std::nullopt;
    if (m[8].matched) pp.count_include_pad = m[8] == "True";
    if (m[9].matched && m[9] != "None") return *why = "divisor_override", std::nullopt;
    return pp;
  }
  *why = "no pooling call in the kernel's graph fragment";
  return std::nullopt;
}


// The window's combine: max, or the sum an average divides afterwards.
std::string combine(const PoolParams& pp, const std::string& a, const std::string& b) {
  return pp.max ? fmt::format("triton_helpers.maximum({}, {})", a, b) : fmt::format("{} + {}", a, b);
}

std::string reduce(const PoolParams& pp, const std::vector<std::string>& terms) {
  std::string acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = combine(pp, acc, terms[i]);
  return acc;
}

// The loads of one input row's horizontal window into `var`: (var, input row expression, indent).
using RowLoads = std::function<std::string(const std::string&, const std::string&, const std::string&)>;

// Both forms' walk down a tile of RH output rows: the first K - S window rows loaded ahead, then per
// output row its S new input rows, the K window rows combined, the average's divisor, the store at
// column `col`, and the window's last K - S rows carried to the next output row.
std::string walk_rows(const PoolParams& pp, const RowLoads& hrow, bool unroll, const std::string& col,
                      const std::string& out) {
  const int64_t K = pp.k, S = pp.s, P = pp.p;
  auto row = [&](const char* base, int64_t d) {
    return S == 1 ? fmt::format("{} + {}", base, d) : fmt::format("{} * {} + {}", base, S, d);
  };
  std::string s;
  for (int64_t dy = 0; dy < K - S; ++dy) s += hrow(fmt::format("c{}", dy), row("oh0", dy - P), "    ");
  s += fmt::format("    for rr in {}(0, RH):\n        oh = oh0 + rr\n", unroll ? "tl.static_range" : "tl.range");
  for (int64_t j = 0; j < S; ++j) s += hrow(fmt::format("n{}", j), row("oh", K - S + j - P), "        ");
  std::vector<std::string> window;
  for (int64_t dy = 0; dy < K - S; ++dy) window.push_back(fmt::format("c{}", dy));
  for (int64_t j = 0; j < S; ++j) window.push_back(fmt::format("n{}", j));
  s += fmt::format("        acc = {}\n", reduce(pp, window));
  if (!pp.max) {
    if (pp.count_include_pad) {
      s += fmt::format("        acc = acc / {}.0\n", K * K);
    } else {
      s += fmt::format(
          "        hs = oh * {S} - {P}\n        ws = {col} * {S} - {P}\n"
          "        cnt = (tl.minimum(hs + {K}, H) - tl.maximum(hs, 0)) * (tl.minimum(ws + {K}, W) - tl.maximum(ws, 0))\n"
          "        acc = acc / cnt.to(tl.float32)\n",
          fmt::arg("S", S), fmt::arg("P", P), fmt::arg("K", K), fmt::arg("col", col));
    }
  }
  s += fmt::format("        tl.store(base_out + oh * WO + {}, acc.to({}.dtype.element_ty), omask & (oh < HO))\n", col, out);
  for (int64_t dy = 0; dy < K - S; ++dy) s += fmt::format("        c{} = {}\n", dy, window[dy + S]);
  return s;
}

// The template's entry: G stacked tiles ([G, 1] rows of unit indices against [1, BW] columns), the
// first K-S window rows loaded into registers, then each output row loads only its S new input rows.
std::string pool_def(const ir::Kernel& ker, const PoolParams& pp, const std::string& params, const std::string& in,
                     const std::string& out, int64_t h, int64_t w, int64_t ho, int64_t wo, int64_t rh, int64_t bw,
                     int64_t g, int64_t colb, int64_t rowc, int64_t units, bool wide, bool unroll) {
  const int64_t K = pp.k, S = pp.s, P = pp.p;
  const std::string neutral = pp.max ? "float('-inf')" : "0.0";
  auto hrow = [&](const std::string& var, const std::string& ih, const std::string& ind) {
    std::string s = fmt::format("{0}ih = {1}\n{0}rok = (ih >= 0) & (ih < H)\n", ind, ih);
    for (int64_t dx = 0; dx < K; ++dx) {
      s += fmt::format("{}iw = ow * {} + {}\n", ind, S, dx - P);
      s += fmt::format("{}v = tl.load(base_in + ih * W + iw, omask & rok & (iw >= 0) & (iw < W), other={}).to(tl.float32)\n",
                       ind, neutral);
      s += dx == 0 ? fmt::format("{}{} = v\n", ind, var) : fmt::format("{}{} = {}\n", ind, var, combine(pp, var, "v"));
    }
    return s;
  };
  std::string rows = walk_rows(pp, hrow, unroll, "ow", out);
  return fmt::format(
      "def {name}({params}):\n"
      "    # kernelopt template pool2d ({kind} {K}x{K}, stride {S}, padding {P}): rows streamed once.\n"
      "    H: tl.constexpr = {h}\n    W: tl.constexpr = {w}\n    HO: tl.constexpr = {ho}\n    WO: tl.constexpr = {wo}\n"
      "    RH: tl.constexpr = {rh}\n    BW: tl.constexpr = {bw}\n    G: tl.constexpr = {g}\n"
      "    unit = tl.program_id(0){widen} * G + tl.arange(0, G)[:, None]\n"
      "    plane = unit // {per_plane}\n"
      "    rest = unit % {per_plane}\n"
      "    oh0 = (rest // {colb}) * RH\n"
      "    ow = (rest % {colb}) * BW + tl.arange(0, BW)[None, :]\n"
      "    omask = (ow < WO) & (unit < {units})\n"
      "    base_in = {in} + plane * (H * W)\n"
      "    base_out = {out} + plane * (HO * WO)\n"
      "{rows}",
      fmt::arg("name", ker.entry), fmt::arg("params", params), fmt::arg("kind", pp.max ? "max" : "avg"),
      fmt::arg("K", K), fmt::arg("S", S), fmt::arg("P", P), fmt::arg("h", h), fmt::arg("w", w), fmt::arg("ho", ho),
      fmt::arg("wo", wo), fmt::arg("rh", rh), fmt::arg("bw", bw), fmt::arg("g", g), fmt::arg("per_plane", rowc * colb),
      fmt::arg("colb", colb), fmt::arg("units", units), fmt::arg("in", in), fmt::arg("out", out),
      fmt::arg("widen", wide ? ".to(tl.int64)" : ""), fmt::arg("rows", rows));
}

// The stride-1 form with register windows: a thread owns V consecutive columns of a row, read as
// one aligned V-wide vector (plus its neighbours' vectors where the window reaches past it: P to
// the left, K-1-P to the right), split into columns, combined there, joined back. An input row
// then costs at most three vector loads per V outputs instead of K one-element loads per output
// (the shifted form's K L1 requests per element measured 1.41x the floor at 4x4 on the H200).
std::string pool_chunked_def(const ir::Kernel& ker, const PoolParams& pp, const std::string& params,
                             const std::string& in, const std::string& out, int64_t h, int64_t w, int64_t ho,
                             int64_t wo, int64_t rh, int64_t bw, int64_t g, int64_t v, int64_t colb, int64_t rowc,
                             int64_t units, bool wide) {
  const int64_t K = pp.k, P = pp.p, C = bw / v, GC = g * C;
  const std::string neutral = pp.max ? "float('-inf')" : "0.0";
  auto hrow = [&](const std::string& var, const std::string& ih, const std::string& ind) {
    std::vector<std::string> lines = {fmt::format("ih = {}", ih), "rok = (ih >= 0) & (ih < H) & live",
                                      "ptr = base_in + ih * W + col",
                                      fmt::format("m = tl.load(ptr, rok & (col < W), other={}).to(tl.float32)", neutral)};
    std::map<int64_t, std::string> ext;  // input column offset from the chunk's start -> its column
    auto add = [&](const std::string& t, int64_t shift) {
      auto more = split_columns(t, v, GC);
      lines.insert(lines.end(), more.begin(), more.end());
      for (int64_t j = 0; j < v; ++j) ext[shift + j] = fmt::format("{}_{}", t, j);
    };
    add("m", 0);
    if (P > 0) {
      lines.push_back(fmt::format("lf = tl.load(ptr - {0}, rok & (col >= {0}), other={1}).to(tl.float32)", v, neutral));
      add("lf", -v);
    }
    if (K - 1 - P > 0) {
      lines.push_back(fmt::format("rt = tl.load(ptr + {0}, rok & (col + {0} < W), other={1}).to(tl.float32)", v, neutral));
      add("rt", v);
    }
    std::vector<std::string> cols;
    for (int64_t j = 0; j < v; ++j) {
      std::vector<std::string> terms;
      for (int64_t dx = 0; dx < K; ++dx) terms.push_back(ext.at(j + dx - P));
      lines.push_back(fmt::format("h_{} = {}", j, reduce(pp, terms)));
      cols.push_back(fmt::format("h_{}", j));
    }
    auto joined = join_columns(cols, GC, var);
    lines.insert(lines.end(), joined.begin(), joined.end());
    std::string s;
    for (const auto& l : lines) s += ind + l + "\n";
    return s;
  };
  std::string rows = walk_rows(pp, hrow, true, "col", out);
  return fmt::format(
      "def {name}({params}):\n"
      "    # kernelopt template pool2d ({kind} {K}x{K}, stride 1, padding {P}): rows streamed once, {V} columns\n"
      "    # per thread read as aligned vectors, the window combined in registers.\n"
      "    H: tl.constexpr = {h}\n    W: tl.constexpr = {w}\n    HO: tl.constexpr = {ho}\n    WO: tl.constexpr = {wo}\n"
      "    RH: tl.constexpr = {rh}\n"
      "    r = tl.arange(0, {gc})[:, None]\n"
      "    unit = tl.program_id(0){widen} * {g} + r // {c}\n"
      "    live = unit < {units}\n"
      "    plane = unit // {per_plane}\n"
      "    rest = unit % {per_plane}\n"
      "    oh0 = (rest // {colb}) * RH\n"
      "    col = (rest % {colb}) * {bw} + (r % {c}) * {V} + tl.arange(0, {V})[None, :]\n"
      "    omask = (col < WO) & live\n"
      "    base_in = {in} + plane * (H * W)\n"
      "    base_out = {out} + plane * (HO * WO)\n"
      "{rows}",
      fmt::arg("name", ker.entry), fmt::arg("params", params), fmt::arg("kind", pp.max ? "max" : "avg"),
      fmt::arg("K", K), fmt::arg("P", P), fmt::arg("V", v), fmt::arg("h", h), fmt::arg("w", w), fmt::arg("ho", ho),
      fmt::arg("wo", wo), fmt::arg("rh", rh), fmt::arg("gc", GC), fmt::arg("g", g), fmt::arg("c", C),
      fmt::arg("units", units), fmt::arg("per_plane", rowc * colb), fmt::arg("colb", colb), fmt::arg("bw", bw),
      fmt::arg("in", in), fmt::arg("out", out), fmt::arg("widen", wide ? ".to(tl.int64)" : ""),
      fmt::arg("rows", rows));
}

}  // namespace

std::vector<Candidate> pool2d(const KernelProfile& k, std::string* why_not) {
  std::string why;
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "pointwise") return no("not a pointwise pooling kernel");
  if (ker.aten_ops != std::vector<std::string>{"aten.max_pool2d_with_indices"} &&
      ker.aten_ops != std::vector<std::string>{"aten.avg_pool2d"})
    return no(fmt::format("the kernel is not one square 2-D pooling op alone (it computes {})",
                          fmt::join(ker.aten_ops, ", ")));
  auto pp = parse(ker.comment, &why);
  if (!pp) return no(why);
  if (pp->s > pp->k || pp->k > 8 || pp->p * 2 > pp->k) return no("stride above kernel size, or a window above 8");
  std::vector<const ir::KernelParam*> runtime;
  for (const ir::KernelParam& p : ker.signature)
    if (!p.is_constexpr) runtime.push_back(&p);
  if (runtime.size() != 3 || runtime[2]->name != "xnumel" || verify::pure_output_args(ker) != std::vector<size_t>{1})
    return no("expected (input, output, xnumel): the kernel must compute only the pooled values");
  if (k.launches.size() != 1) return no("one launch expected");
  const json& a = k.launches.front()["args"];
  if (a.size() != 3 || !a[0].contains("shape") || a[0]["shape"].size() != 4 || !a[1].contains("shape") ||
      a[1]["shape"].size() != 4 || !is_contiguous(a[0]) || !is_contiguous(a[1]))
    return no("input and output must be contiguous NCHW tensors");
  if (a[0]["dtype"] != a[1]["dtype"]) return no("input and output dtypes differ");
  int64_t nc = a[0]["shape"][0].get<int64_t>() * a[0]["shape"][1].get<int64_t>();
  int64_t h = a[0]["shape"][2], w = a[0]["shape"][3], ho = a[1]["shape"][2], wo = a[1]["shape"][3];
  int64_t K = pp->k, S = pp->s, P = pp->p;
  if (ho != (h + 2 * P - K) / S + 1 || wo != (w + 2 * P - K) / S + 1 ||
      a[1]["shape"][0] != a[0]["shape"][0] || a[1]["shape"][1] != a[0]["shape"][1])
    return no("output shape does not match the pooling parameters");
  int64_t xnumel = a[2].value("value", int64_t{0});
  if (xnumel != nc * ho * wo) return no("xnumel is not the output's element count");
  bool wide = nc * h * w >= (int64_t{1} << 31);

  const std::string params = entry_params(ker);
  const std::string in = runtime[0]->name, out = runtime[1]->name;
  std::vector<Candidate> outc;
  // Each program streams G independent tiles of RH output rows x BW columns side by side (a [G, BW]
  // block), so that a program has G*BW loads in flight; with one tile of one warp the H200 ran out of
  // resident programs (32 per SM) before it ran out of bandwidth. The row loop is either a loop or
  // fully unrolled (tl.static_range), which lets the compiler issue the next rows' loads early.
  // Widths: the two powers of two around the output width (and twice it when that is a power of
  // two: a half-masked wide tile won on the H200 before tiles could be stacked).
  int64_t np2 = std::min<int64_t>(next_pow2(wo), 1024);
  std::vector<int64_t> widths;
  for (int64_t bw : {np2 / 2, np2, np2 == wo ? 2 * np2 : 0})
    if (bw >= 32 && bw <= 1024) widths.push_back(bw);
  if (widths.empty()) widths.push_back(32);
  // Stride 1 with aligned rows: the register-window form first (CPU mode keeps the first accepted
  // instance, so the corpus's stride-1 pool verifies this form end to end and its stride-2 one the
  // shifted form). Four columns per thread (16-byte fp32 vectors; eight screened no faster on the
  // H200 at any tile), each thread holding one vector per tile row.
  if (S == 1) {
    for (int64_t v : {4}) {
      if (P > v || K - 1 - P > v || w % v != 0) continue;
      for (int64_t g : {2, 1, 4, 8}) {
        for (int64_t bw : {np2}) {
          if (bw < v * 4 || g * bw > 4096) continue;
          for (int64_t rh : {8, 16}) {
            if (rh > 2 * ho && rh > 4) continue;
            int64_t colb = cdiv(wo, bw), rowc = cdiv(ho, rh), units = nc * rowc * colb;
            int64_t programs = cdiv(units, g);
            int64_t xblock = xnumel / programs;
            if (xblock < 1 || cdiv(xnumel, xblock) < programs) continue;
            std::string source = replace_entry(
                ker, pool_chunked_def(ker, *pp, params, in, out, h, w, ho, wo, rh, bw, g, v, colb, rowc, units, wide));
            for (int warps : {1, 2, 4, 8}) {
              int64_t per_thread = g * bw / (32 * warps);
              if (per_thread != v) continue;
              json c = {{"XBLOCK", xblock}, {"num_warps", warps}, {"num_stages", 1}};
              outc.push_back(instance(ker, "pooling", source, c,
                                      fmt::format("pool2d register windows, {} columns per thread, {} tile(s) of {} "
                                                  "rows x {} columns per program, num_warps={}",
                                                  v, g, rh, bw, warps)));
            }
          }
        }
      }
    }
  }
  // The shifted form's first instance stacks two tiles and unrolls its rows, so that CPU mode
  // verifies both of its code paths where the register-window form does not apply. Beside that
  // form only its unrolled 8-row tiles at the output's width (the shifted form's best on the H200's
  // stride-1 pools): the search screens a few dozen candidates in a single-op budget, and a long
  // tail of shifted tiles pushed the register windows out of it.
  const bool beside = !outc.empty();
  if (beside) widths = {np2};
  for (bool unroll : {true, false}) {
    if (beside && !unroll) continue;
    for (int64_t g : {2, 1, 4, 8}) {
      for (int64_t bw : widths) {
        if (g * bw > 2048 || (g > 1 && g * bw < 128)) continue;
        for (int64_t rh : {8, 4, 16}) {
          if (beside && rh != 8) continue;
          if (rh > 2 * ho && rh > 4) continue;
          if (unroll && rh > 8) continue;  // 16 unrolled rows of K loads each: register pressure
          int64_t colb = cdiv(wo, bw), rowc = cdiv(ho, rh), units = nc * rowc * colb;
          int64_t programs = cdiv(units, g);
          // Inductor's Grid1D launches cdiv(xnumel, XBLOCK) programs: XBLOCK is chosen so that covers them.
          int64_t xblock = xnumel / programs;
          if (xblock < 1 || cdiv(xnumel, xblock) < programs) continue;
          std::string source = replace_entry(ker, pool_def(ker, *pp, params, in, out, h, w, ho, wo, rh, bw, g, colb,
                                                            rowc, units, wide, unroll));
          for (int warps : {1, 2, 4, 8}) {
            int64_t per_thread = g * bw / (32 * warps);
            if (per_thread < 2 || per_thread > 8) continue;
            json c = {{"XBLOCK", xblock}, {"num_warps", warps}, {"num_stages", 1}};
            outc.push_back(instance(ker, "pooling", source, c,
                                    fmt::format("pool2d streaming, {} tile(s) of {} rows x {} columns per program{}, "
                                                "num_warps={}", g, rh, bw, unroll ? " (rows unrolled)" : "", warps)));
          }
        }
      }
    }
  }
  if (outc.empty()) return no("no tiling fits the output");
  return outc;
}

}  // namespace kopt::agents::templates
