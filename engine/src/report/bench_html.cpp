// report.html of `kernelopt bench`: one self-contained page (the optimize report's
// CSS and sorting script, inline SVG drawn here, nothing fetched): the per-level
// table, the distribution of speedups over torch.compile per level, and every
// problem's row in a sortable table.
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
std::string pct(std::optional<double> v) { return v ? fmt::format("{:.0f}%", *v * 100) : std::string(kDash); }

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

void level_table(std::string& out, const json& b) {
  out += "<h2>Table</h2>\n<div class=\"scroll\"><table class=\"sortable\" id=\"levels\"><thead><tr><th>level</th>"
         "<th>N</th><th>optimized</th><th>fallback</th><th>errors</th><th>correct</th>"
         "<th>geomean vs torch.compile (incl. fallbacks)</th><th>geomean optimized only (n/N)</th>";
  for (double p : bench::kFastP) out += fmt::format("<th>fast_{}</th>", bench::p_label(p));
  out += "<th>wall-time geomean</th><th>host-bound</th><th>headroom recovered (n)</th>"
         "<th>max peak mem / torch.compile's</th></tr></thead><tbody>\n";
  for (const json& l : array(b, "levels")) {
    bool m = boolean(l, "measured").value_or(false);
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td class=\"num\">{}</td><td class=\"num\"{}>{}</td>",
                       h(text(l, "level")), format_count(l, "problems"), format_count(l, "optimized"),
                       format_count(l, "fallback"), format_count(l, "errors"), num_attr(number(l, "correct_rate")),
                       pct(number(l, "correct_rate")));
    if (m) {
      out += fmt::format("<td class=\"num\"{}>{} ({} measured)</td><td class=\"num\"{}>{} ({}/{})</td>",
                         num_attr(number(l, "geomean")), format_speedup(number(l, "geomean")),
                         format_count(l, "geomean_n"), num_attr(number(l, "geomean_optimized")),
                         format_speedup(number(l, "geomean_optimized")), format_count(l, "optimized_n"),
                         format_count(l, "problems"));
      for (double p : bench::kFastP) {
        auto v = number(object(l, "fast_p"), bench::p_label(p));
        out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(v), pct(v));
      }
      out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\"{}>{} ({})</td>",
                         format_speedup(number(l, "wall_geomean")), format_count(l, "host_bound"),
                         num_attr(number(l, "headroom")), pct(number(l, "headroom")), format_count(l, "headroom_n"));
    } else {
      out += "<td>not measured</td><td>not measured</td>";
      for (size_t i = 0; i < std::size(bench::kFastP); ++i) out += "<td>—</td>";
      out += "<td>not measured</td><td>—</td><td>—</td>";
    }
    auto peak = number(l, "max_peak_ratio");
    out += fmt::format("<td class=\"num\"{}>{}</td></tr>\n", num_attr(peak),
                       peak ? fmt::format("{:.2f}x", *peak) : std::string(kDash));
  }
  out += "</tbody></table></div>\n";
}

std::string ms_cell(const json& r, const char* which, const char* key) {
  auto v = number(object(r, which), key);
  return fmt::format("<td class=\"num\"{}>{}</td>", num_attr(v), format_ms(v));
}

void problem_table(std::string& out, const json& b, bool measured) {
  out += "<h2>Problems</h2>\n<p class=\"explain\">Click a header to sort. Times are per call: GPU time (CUDA events, "
         "host hidden, L2 flushed), wall time (call to device-wide sync) and the kernels' summed durations "
         "(docs/bench.md).</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"problems\"><thead><tr>"
         "<th>level</th><th>problem</th><th>status</th><th>correct</th><th>= eager</th><th>eager ms</th>"
         "<th>torch.compile ms</th><th>optimized ms</th><th>speedup</th><th>wall compile ms</th><th>wall optimized ms</th>"
         "<th>kernels compile ms</th><th>kernels optimized ms</th><th>host-bound</th><th>accepted kernels</th>"
         "<th>vendor share</th><th>peak mem</th><th>reason</th></tr></thead><tbody>\n";
  for (const json& r : array(b, "rows")) {
    auto yn = [&](std::string_view k) {
      auto v = boolean(r, k);
      return v ? fmt::format("<td class=\"{0}\">{0}</td>", *v ? "yes" : "no") : std::string("<td>—</td>");
    };
    std::string status = text(r, "status");
    out += fmt::format("<tr class=\"st-{}\"><td>{}</td><td><code>{}</code></td><td>{}</td>", h(status),
                       h(text(r, "level")), h(text(r, "problem")), h(status));
    out += yn("correct") + yn("matches_eager");
    if (measured && boolean(r, "measured").value_or(false)) {
      out += ms_cell(r, "eager", "device_ms") + ms_cell(r, "compiled", "device_ms") +
             ms_cell(r, "optimized", "device_ms");
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(number(r, "speedup")),
                         format_speedup(number(r, "speedup")));
      out += ms_cell(r, "compiled", "wall_ms") + ms_cell(r, "optimized", "wall_ms") +
             ms_cell(r, "compiled", "kernel_ms") + ms_cell(r, "optimized", "kernel_ms") + yn("host_bound");
    } else {
      out += "<td>not measured</td><td>not measured</td><td>not measured</td><td>—</td><td>—</td><td>—</td>"
             "<td>—</td><td>—</td><td>—</td>";
    }
    std::string acc;
    for (const json& a : array(r, "accepted")) acc += "<br><code>" + h(a.is_string() ? a.get<std::string>() : "") + "</code>";
    out += fmt::format("<td data-v=\"{}\">{}/{}{}</td>", format_count(r, "accepted_count"),
                       format_count(r, "accepted_count"), format_count(r, "kernels"), acc);
    // Sorted by the peak's bytes; the cell shows it with its ratio to torch.compile's own peak.
    std::string mem = peak_mem_cell(r);
    auto peak = mem == kDash ? std::nullopt : number(object(r, "memory"), "peak_bytes");
    out += fmt::format("<td class=\"num\"{}>{}</td><td class=\"num\"{}>{}</td><td class=\"note\">{}</td></tr>\n",
                       num_attr(number(r, "vendor_share")), pct(number(r, "vendor_share")), num_attr(peak), h(mem),
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
         "tr.st-error td{background:#fce8e6}</style>\n</head>\n";
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
  out += charts.empty() ? "<p class=\"explain\">not measured</p>\n" : charts;
  problem_table(out, b, measured);
  out += std::string("<script>") + html_script() + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kopt::report
