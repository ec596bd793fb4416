// What `kernelopt bench` and `bench merge` print on stdout: the same figures as report.md, cut to what
// fits a terminal (every line at most kTerminalWidth columns, counted in characters, not bytes: "×" and
// "→" are one column each). report.md and report.html keep every column.
#include <fmt/format.h>

#include "bench/table.h"
#include "report/bench_report.h"
#include "report/report.h"
#include "report/report_svg.h"

namespace kopt::report {

using nlohmann::json;
using namespace detail;

namespace {

// `s` fitted to `w` columns and padded: left-aligned, or right-aligned for numbers.
std::string cell(std::string_view s, size_t w, bool right = false) {
  std::string f = svg::truncate(s, w);
  std::string pad(w - svg::code_points(f), ' ');
  return right ? pad + f : f + pad;
}

// The fast_p columns a terminal keeps: p = 1.0, 1.5, 2.0 against torch.compile, 1.0 against eager.
constexpr const char* kShownP[] = {"1.0", "1.5", "2.0"};

void level_table(std::string& out, const json& b) {
  out += cell("level", 5) + cell("N", 5, true) + cell("opt", 5, true) + cell("fb", 5, true) + cell("err", 5, true) +
         cell("correct", 9, true) + cell("geomean (n)", 16, true) + cell("opt only (n/N)", 16, true);
  for (const char* p : kShownP) out += cell(fmt::format("fast_{}", p), 9, true);
  out += cell("vs eager", 10, true) + cell("eager_1.0", 10, true) + cell("peak", 7, true) + "\n";
  for (const json& l : array(b, "levels")) {
    std::string n = format_count(l, "problems");
    out += cell(text(l, "level"), 5) + cell(n, 5, true) + cell(format_count(l, "optimized"), 5, true) +
           cell(format_count(l, "fallback"), 5, true) + cell(format_count(l, "errors"), 5, true) +
           cell(format_share(number(l, "correct_rate")), 9, true);
    if (boolean(l, "measured").value_or(false)) {
      out += cell(fmt::format("{} ({})", format_speedup(number(l, "geomean")), format_count(l, "geomean_n")), 16, true);
      out += cell(fmt::format("{} ({}/{})", format_speedup(number(l, "geomean_optimized")),
                              format_count(l, "optimized_n"), n),
                  16, true);
      for (const char* p : kShownP) out += cell(format_share(number(object(l, "fast_p"), p)), 9, true);
      out += cell(format_speedup(number(l, "geomean_eager")), 10, true) +
             cell(format_share(number(object(l, "fast_p_eager"), "1.0")), 10, true);
    } else {
      out += cell("not measured", 16, true) + cell("not measured", 16, true);
      for (size_t i = 0; i < std::size(kShownP); ++i) out += cell(kDash, 9, true);
      out += cell(kDash, 10, true) + cell(kDash, 10, true);
    }
    auto peak = number(l, "max_peak_ratio");
    out += cell(peak ? fmt::format("{:.2f}x", *peak) : std::string(kDash), 7, true) + "\n";
  }
  out += "geomean: speedup over torch.compile, fallbacks at 1.00×; fast_p: share of N correct and more than p times\n"
         "as fast as torch.compile; vs eager / eager_1.0: the same against eager; peak: most device memory over\n"
         "torch.compile's own peak.\n";
}

void time_table(std::string& out, const json& b) {
  out += "\nWhere the time went (mean s per problem; the parts add up to total):\n";
  out += cell("level", 6) + cell("n", 5, true) + cell("total", 9, true);
  for (const char* part : bench::kTimeParts) out += cell(part, 9, true);
  out += "\n";
  for (const json& l : array(b, "levels")) {
    out += cell(text(l, "level"), 6) + cell(format_count(l, "time_n"), 5, true) +
           cell(mean_seconds(l, "total"), 9, true);
    for (const char* part : bench::kTimeParts) out += cell(mean_seconds(l, part), 9, true);
    out += "\n";
  }
}

void problem_lines(std::string& out, const json& b, bool measured) {
  constexpr size_t kProblem = 34, kStatus = 10, kCorrect = 8, kSpeedup = 8, kTimes = 20;
  constexpr size_t kReason = kTerminalWidth - kProblem - kStatus - kCorrect - kSpeedup - kTimes;
  out += "\n" + cell("problem", kProblem) + cell("status", kStatus) + cell("correct", kCorrect) +
         cell("speedup", kSpeedup, true) + cell("  ms: compile → opt", kTimes) + "reason\n";
  for (const json& r : array(b, "rows")) {
    auto correct = boolean(r, "correct");
    std::string line = cell(text(r, "problem"), kProblem - 1) + " " + cell(text(r, "status"), kStatus) +
                       cell(correct ? (*correct ? "yes" : "no") : kDash, kCorrect);
    if (measured && boolean(r, "measured").value_or(false)) {
      line += cell(format_speedup(number(r, "speedup")), kSpeedup, true) +
              cell(fmt::format("  {} → {}", format_ms(number(object(r, "compiled"), "device_ms")),
                               format_ms(number(object(r, "optimized"), "device_ms"))),
                   kTimes);
    } else {
      line += cell(kDash, kSpeedup, true) + cell("  not measured", kTimes);
    }
    std::string reason = text(r, "reason");
    line += svg::truncate(reason.empty() ? kDash : reason, kReason);
    out += line + "\n";
  }
}

}  // namespace

std::string render_bench_terminal(const json& b) {
  bool measured = performance_measured(b);
  std::string out = svg::truncate(bench_setup_line(b), kTerminalWidth) + "\n\n";
  level_table(out, b);
  if (timed(b)) time_table(out, b);
  problem_lines(out, b, measured);
  return out;
}

}  // namespace kopt::report
