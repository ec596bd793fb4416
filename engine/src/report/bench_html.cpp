// report.html of `kernelopt bench`: one self-contained page (the optimize report's
// CSS and sorting script, inline SVG drawn here, nothing fetched): the per-level
// table, the distribution of speedups over torch.compile per level, and every
// problem's row in a sortable table.
#include <cctype>

#include <fmt/format.h>

#include "bench/table.h"
#include "report/bench_report.h"
#include "report/report.h"

namespace kopt::report {

namespace {

using nlohmann::json;
using namespace detail;

std::string h(std::string_view s) { return escape_html(s); }
std::string num_attr(std::optional<double> v) { return v ? fmt::format(" data-v=\"{}\"", *v) : ""; }

struct Bin {
  double lo, hi;
  const char* label;
};
// Speedup bins: the middle one is "the same as torch.compile" within G4's margin.
constexpr Bin kBins[] = {{0, 0.97, "< 0.97×"},     {0.97, 1.03, "0.97–1.03×"}, {1.03, 1.1, "1.03–1.1×"},
                         {1.1, 1.25, "1.1–1.25×"}, {1.25, 1.5, "1.25–1.5×"},   {1.5, 2.0, "1.5–2×"},
                         {2.0, 1e300, "≥ 2×"}};

// One vertical bar per bin: how many measured problems of `level` reached that speedup.
std::string distribution_chart(const json& rows, const std::string& level) {
  size_t counts[std::size(kBins)] = {};
  size_t total = 0;
  for (const json& r : rows) {
    if (level != "all" && text(r, "level") != level) continue;
    auto sp = number(r, "speedup");
    if (!sp || text(r, "status") == "error") continue;
    ++total;
    for (size_t i = 0; i < std::size(kBins); ++i)
      if (*sp >= kBins[i].lo && *sp < kBins[i].hi) ++counts[i];
  }
  if (total == 0) return "";
  size_t most = 1;
  for (size_t c : counts) most = std::max(most, c);
  const double w = 620, hgt = 200, left = 40, bottom = 40, top = 36, slot = (w - left - 10) / std::size(kBins);
  std::string out = fmt::format(
      "<svg class=\"chart\" id=\"dist-{0}\" viewBox=\"0 0 {1} {2}\" width=\"{1}\" height=\"{2}\" role=\"img\" "
      "aria-label=\"speedup distribution, level {0}\"><text x=\"{3}\" y=\"14\">{4}: {5} measured problem(s), "
      "speedup over torch.compile</text>",
      h(level), w, hgt, left, level == "all" ? "all levels" : "level " + h(level), total);
  double plot = hgt - bottom - top;
  for (size_t i = 0; i < std::size(kBins); ++i) {
    double bh = plot * static_cast<double>(counts[i]) / static_cast<double>(most);
    double x = left + slot * static_cast<double>(i) + 6, y = top + plot - bh;
    std::string css = kBins[i].hi <= 0.97 ? "bar-before" : kBins[i].hi <= 1.03 ? "bar-bytes" : "bar-after";
    if (counts[i] > 0)
      out += fmt::format("<rect class=\"bar {}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>{}: "
                         "{}</title></rect>",
                         css, x, y, slot - 12, std::max(bh, 1.0), kBins[i].label, counts[i]);
    out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", x + 2, y - 4, counts[i]);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", x, hgt - bottom + 16, h(kBins[i].label));
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#9aa0a6\"/></svg>\n", left,
                     top + plot, w - 10);
  return out;
}

// Two header rows (the fast_p groups span theirs); short labels, each with its full meaning on hover, so
// every column fits a 1400-px window. Not sortable: a level table has a handful of rows.
void level_table(std::string& out, const json& b) {
  auto th2 = [](const char* label, const char* title) {
    return fmt::format("<th rowspan=\"2\" title=\"{}\">{}</th>", title, label);
  };
  const size_t np = std::size(bench::kFastP);
  out += "<h2>Table</h2>\n<div class=\"scroll\"><table class=\"compact\" id=\"levels\"><thead><tr>";
  out += th2("level", "level") + th2("N", "problems in the level") + th2("opt", "optimized: the result replaced kernels") +
         th2("fallback", "fallback: the result is torch.compile's modules") + th2("errors", "errors: no result") +
         th2("correct", "correct rows over N");
  out += th2("geomean vs torch.compile", "geomean of the speedup over torch.compile over the measured rows, "
                                          "fallbacks at 1.0 (n: the measured rows)");
  out += th2("geomean optimized only", "the same over the optimized rows only (n/N)");
  out += fmt::format("<th colspan=\"{}\" title=\"share of N that is correct and more than p times as fast as "
                     "torch.compile\">fast_p vs torch.compile</th>",
                     np);
  out += th2("geomean vs eager", "geomean of eager's GPU time over the optimized model's");
  out += fmt::format("<th colspan=\"{}\" title=\"share of N that is correct and more than p times as fast as "
                     "eager\">fast_p vs eager</th>",
                     np);
  out += th2("wall geomean", "geomean of the speedup in wall time per call") +
         th2("host-bound", "rows whose torch.compile wall time is more than twice its kernels' time") +
         th2("headroom (n)", "share of the speedup available down to the roofline floors that was won, over the n "
                             "rows at least 1.2x above their floor") +
         th2("peak mem ratio", "the largest peak device memory over torch.compile's own peak");
  out += "</tr><tr>";
  for (int group = 0; group < 2; ++group)
    for (double p : bench::kFastP) out += fmt::format("<th>{}</th>", bench::p_label(p));
  out += "</tr></thead><tbody>\n";
  for (const json& l : array(b, "levels")) {
    bool m = boolean(l, "measured").value_or(false);
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\"{}>{}</td>",
                       h(text(l, "level")), format_count(l, "problems"), format_count(l, "optimized"),
                       format_count(l, "fallback"), format_count(l, "errors"), num_attr(number(l, "correct_rate")),
                       format_share(number(l, "correct_rate")));
    if (m) {
      // The counts under the geomeans, so that the two widest cells are no wider than their numbers.
      out += fmt::format("<td class=\"num\"{}>{}<br><small>({})</small></td><td class=\"num\"{}>{}<br>"
                         "<small>({}/{})</small></td>",
                         num_attr(number(l, "geomean")), format_speedup(number(l, "geomean")),
                         format_count(l, "geomean_n"), num_attr(number(l, "geomean_optimized")),
                         format_speedup(number(l, "geomean_optimized")), format_count(l, "optimized_n"),
                         format_count(l, "problems"));
      auto fast = [&](const char* key) {
        for (double p : bench::kFastP) {
          auto v = number(object(l, key), bench::p_label(p));
          out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(v), format_share(v));
        }
      };
      fast("fast_p");
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(number(l, "geomean_eager")),
                         format_speedup(number(l, "geomean_eager")));
      fast("fast_p_eager");
      out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\"{}>{}<br><small>({})"
                         "</small></td>",
                         format_speedup(number(l, "wall_geomean")), format_count(l, "host_bound"),
                         num_attr(number(l, "headroom")), format_share(number(l, "headroom")), format_count(l, "headroom_n"));
    } else {
      out += "<td>not measured</td><td>not measured</td>";
      for (size_t i = 0; i < 2 * np + 1; ++i) out += "<td>—</td>";
      out += "<td>not measured</td><td>—</td><td>—</td>";
    }
    auto peak = number(l, "max_peak_ratio");
    out += fmt::format("<td class=\"num\"{}>{}</td></tr>\n", num_attr(peak),
                       peak ? fmt::format("{:.2f}x", *peak) : std::string(kDash));
  }
  out += "</tbody></table></div>\n";
}

// "where the time went": mean seconds per problem whose parts add up to the total (bench/table.h).
void time_table(std::string& out, const json& b) {
  if (!timed(b)) return;
  out += "<h2>Where the time went</h2>\n<p class=\"explain\">Mean seconds per problem over the rows with per-stage "
         "times; the parts add up to the total.</p>\n<div class=\"scroll\"><table class=\"compact\" id=\"time\">"
         "<thead><tr><th>level</th><th>problems</th><th>total</th>";
  for (const char* part : bench::kTimeParts) out += fmt::format("<th>{}</th>", part);
  out += "</tr></thead><tbody>\n";
  for (const json& l : array(b, "levels")) {
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", h(text(l, "level")),
                       format_count(l, "time_n"), mean_seconds(l, "total"));
    for (const char* part : bench::kTimeParts) out += fmt::format("<td class=\"num\">{}</td>", mean_seconds(l, part));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

std::string ms_cell(const json& r, const char* which, const char* key) {
  auto v = number(object(r, which), key);
  return fmt::format("<td class=\"num\"{}>{}</td>", num_attr(v), format_ms(v));
}

// A path from results.jsonl made safe for an href: relative, no "..", no scheme, no quote.
std::string report_href(const json& r) {
  std::string dir = text(r, "result_dir");
  if (dir.empty() || dir.front() == '/' || dir.find("..") != std::string::npos || dir.find(':') != std::string::npos)
    return "";
  for (char c : dir)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '.')) return "";
  return dir + "/report.html";
}

// "0.250 → 0.200": torch.compile's time, then the optimized model's, in one cell sorted by the latter.
std::string pair_cell(const json& r, const char* key) {
  auto c = number(object(r, "compiled"), key), o = number(object(r, "optimized"), key);
  return fmt::format("<td class=\"num\"{}>{} &rarr; {}</td>", num_attr(o), format_ms(c), format_ms(o));
}

// Sixteen columns that fit a 1400-px window beside a readable reason: pairs (wall, kernels) share a cell,
// correctness and "= eager" share one, the peak's ratio sits under its bytes, long headers say more on hover.
void problem_table(std::string& out, const json& b, bool measured) {
  out += "<h2>Problems</h2>\n<p class=\"explain\">Click a header to sort; a problem's name opens its own report. "
         "Times are per call: GPU time (CUDA events, host hidden, L2 flushed), wall time (call to device-wide sync) "
         "and the kernels' summed durations, torch.compile &rarr; optimized (docs/bench.md).</p>\n<div "
         "class=\"scroll\"><table class=\"sortable compact\" id=\"problems\"><thead><tr><th>level</th>"
         "<th>problem</th><th>status</th>"
         "<th title=\"within tolerance of torch.compile's output (or no less accurate against float64); = eager: the "
         "result also matches eager PyTorch's\">correct</th><th>eager ms</th>"
         "<th title=\"torch.compile's GPU time per call\">compile ms</th><th>optimized ms</th><th>speedup</th>"
         "<th title=\"wall time per call: call to device-wide sync\">wall ms</th>"
         "<th title=\"the call's kernels' summed durations\">kernels ms</th>"
         "<th title=\"torch.compile's wall time per call is more than twice its kernels' time\">host-bound</th>"
         "<th title=\"accepted kernels of all (hover a cell for their names)\">accepted</th>"
         "<th title=\"vendor (cuBLAS/cuDNN/ATen) share of torch.compile's time\">vendor</th>"
         "<th title=\"most device memory held at once, and that over torch.compile's own peak\">peak mem</th>"
         "<th class=\"reason\">reason</th></tr></thead><tbody>\n";
  for (const json& r : array(b, "rows")) {
    auto yn = [&](std::string_view k) {
      auto v = boolean(r, k);
      return v ? fmt::format("<td class=\"{0}\">{0}</td>", *v ? "yes" : "no") : std::string("<td>—</td>");
    };
    std::string status = text(r, "status"), href = report_href(r);
    std::string name = "<code>" + h(text(r, "problem")) + "</code>";
    if (!href.empty() && status != "error") name = "<a href=\"" + h(href) + "\">" + name + "</a>";
    out += fmt::format("<tr class=\"st-{}\"><td>{}</td><td class=\"problem\">{}</td><td>{}</td>", h(status),
                       h(text(r, "level")), name, h(status));
    auto correct = boolean(r, "correct"), eager = boolean(r, "matches_eager");
    out += !correct ? std::string("<td>—</td>")
                    : fmt::format("<td class=\"{0}\">{0}{1}</td>", *correct ? "yes" : "no",
                                  !eager ? "" : *eager ? "<br><small>= eager</small>" : "<br><small>&ne; eager</small>");
    if (measured && boolean(r, "measured").value_or(false)) {
      out += ms_cell(r, "eager", "device_ms") + ms_cell(r, "compiled", "device_ms") +
             ms_cell(r, "optimized", "device_ms");
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(number(r, "speedup")),
                         format_speedup(number(r, "speedup")));
      out += pair_cell(r, "wall_ms") + pair_cell(r, "kernel_ms") + yn("host_bound");
    } else {
      // Said once per row; the other time cells are dashes (one narrow column each, nothing to sort).
      out += "<td>not measured</td>";
      for (int i = 0; i < 6; ++i) out += "<td title=\"not measured\">—</td>";
    }
    // The accepted kernels' names are long: on hover (and in the problem's own report), not in the cell.
    std::string names;
    for (const char* key : {"accepted", "fused"})
      for (const json& a : array(r, key)) names += (names.empty() ? "" : "\n") + (a.is_string() ? a.get<std::string>() : "");
    size_t fused = array(r, "fused").size();  // a chosen region: "+N" after k/n
    out += fmt::format("<td class=\"num\" data-v=\"{}\"{}>{}/{}{}</td>", format_count(r, "accepted_count"),
                       names.empty() ? "" : " title=\"" + h(names) + "\"", format_count(r, "accepted_count"),
                       format_count(r, "kernels"), fused ? fmt::format(" +{}", fused) : "");
    // Sorted by the peak's bytes; the cell shows it with its ratio to torch.compile's own peak under it.
    std::string mem = peak_mem_cell(r, "<br><small>", "</small>");  // numbers and units only: nothing to escape
    auto peak = mem == kDash ? std::nullopt : number(object(r, "memory"), "peak_bytes");
    out += fmt::format("<td class=\"num\"{}>{}</td><td class=\"num\"{}>{}</td><td class=\"note\">{}</td></tr>\n",
                       num_attr(number(r, "vendor_share")), format_share(number(r, "vendor_share")), num_attr(peak), mem,
                       text(r, "reason").empty() ? kDash : h(text(r, "reason")));
  }
  out += "</tbody></table></div>\n";
}

}  // namespace

std::string render_bench_html(const json& b) {
  bool measured = performance_measured(b);
  std::string suite = text(b, "suite");
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"kernelopt\">\n";
  out += "<title>kernelopt bench: " + h(suite) + "</title>\n<style>" + html_style() +
         "tr.st-error td{background:#fce8e6}div.charts{display:flex;flex-wrap:wrap;gap:0 24px}"
         "td.problem{min-width:150px;max-width:260px;overflow-wrap:anywhere}</style>\n</head>\n";
  out += fmt::format("<body data-performance-measured=\"{}\">\n<h1>kernelopt bench: <code>{}</code></h1>\n",
                     measured ? "true" : "false", h(suite));
  out += "<p>" + h(bench_setup_line(b)) + "</p>\n";
  if (!measured)
    out += "<p class=\"headline unmeasured\">Performance not measured (CPU mode): the table shows correctness and what "
           "was replaced or fell back, no speed.</p>\n";
  level_table(out, b);
  out += "<h2>Speedup distribution</h2>\n";
  std::string charts;
  if (measured)
    for (const json& l : array(b, "levels")) charts += distribution_chart(array(b, "rows"), text(l, "level"));
  out += charts.empty() ? "<p class=\"explain\">not measured</p>\n" : "<div class=\"charts\">" + charts + "</div>\n";
  time_table(out, b);
  problem_table(out, b, measured);
  out += std::string("<script>") + html_script() + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kopt::report
