// report.md of `kernelopt bench`: the per-level table, then one row per problem.
#include <fmt/format.h>

#include "bench/table.h"
#include "report/bench_report.h"
#include "report/report.h"

namespace kopt::report {

using nlohmann::json;
using namespace detail;

namespace {

// Markdown table cells: no pipes or newlines from captured error text.
std::string cell(std::string_view s) {
  std::string c = clean(s), out;
  for (char ch : c) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out.empty() ? kDash : out;
}

std::string ms3(const json& row, const char* which, const char* key) {
  return format_ms(number(object(row, which), key));
}

std::string peak_ratio(const json& level) {
  auto x = number(level, "max_peak_ratio");
  return x ? fmt::format("{:.2f}x", *x) : std::string(kDash);
}

std::string yes_no(const json& row, std::string_view key) {
  auto b = boolean(row, key);
  return b ? (*b ? "yes" : "no") : kDash;
}

}  // namespace

namespace detail {

bool timed(const json& b) {
  for (const json& l : array(b, "levels"))
    if (number(l, "time_n").value_or(0) > 0) return true;
  return false;
}

std::string mean_seconds(const json& level, const char* part) {
  auto v = number(object(level, "time"), part);
  return v ? fmt::format("{:.1f}", *v) : std::string(kDash);
}

}  // namespace detail

std::string render_bench_markdown(const json& b) {
  bool measured = performance_measured(b);
  std::string out = fmt::format("# kernelopt bench: {}\n\n", cell(text(b, "suite")));
  out += bench_setup_line(b) + "\n\n";
  if (!measured)
    out += "Performance not measured (CPU mode): times and speedups are not reported; the table shows correctness "
           "and what was replaced or fell back.\n\n";
  out += "## Table\n\n";
  out += "| level | N | optimized | fallback | errors | correct | geomean vs torch.compile (incl. fallbacks) | "
         "geomean optimized only (n/N) |";
  for (double p : bench::kFastP) out += fmt::format(" fast_{} |", bench::p_label(p));
  out += " geomean vs eager |";
  for (double p : bench::kFastP) out += fmt::format(" fast_{} vs eager |", bench::p_label(p));
  out += " wall-time geomean | host-bound | headroom recovered (n) | max peak mem / torch.compile's |\n|";
  for (int i = 0; i < 13 + 2 * static_cast<int>(std::size(bench::kFastP)); ++i) out += "---|";
  out += "\n";
  for (const json& l : array(b, "levels")) {
    std::string n = format_count(l, "problems");
    out += fmt::format("| {} | {} | {} | {} | {} | {} | ", text(l, "level"), n, format_count(l, "optimized"),
                       format_count(l, "fallback"), format_count(l, "errors"), format_share(number(l, "correct_rate")));
    if (boolean(l, "measured").value_or(false)) {
      out += fmt::format("{} ({} measured) | {} ({}/{}) |", format_speedup(number(l, "geomean")),
                         format_count(l, "geomean_n"), format_speedup(number(l, "geomean_optimized")),
                         format_count(l, "optimized_n"), n);
      for (double p : bench::kFastP) out += " " + format_share(number(object(l, "fast_p"), bench::p_label(p))) + " |";
      out += " " + format_speedup(number(l, "geomean_eager")) + " |";
      for (double p : bench::kFastP) out += " " + format_share(number(object(l, "fast_p_eager"), bench::p_label(p))) + " |";
      out += fmt::format(" {} | {} | {} ({}) |", format_speedup(number(l, "wall_geomean")),
                         format_count(l, "host_bound"), format_share(number(l, "headroom")), format_count(l, "headroom_n"));
    } else {
      out += fmt::format("not measured | not measured ({}/{}) |", format_count(l, "optimized"), n);
      for (size_t i = 0; i < 2 * std::size(bench::kFastP) + 1; ++i) out += " — |";
      out += " not measured | — | — |";
    }
    out += " " + peak_ratio(l) + " |\n";
  }
  if (timed(b)) {
    // Where a problem's time goes: mean seconds, whose parts add up to the total (bench/table.h).
    out += "\n## Where the time went\n\nMean seconds per problem over the rows with per-stage times; the parts add up "
           "to the total.\n\n| level | problems | total | capture | start | measure | search | verify | bench | other |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const json& l : array(b, "levels")) {
      out += fmt::format("| {} | {} | {} |", text(l, "level"), format_count(l, "time_n"), mean_seconds(l, "total"));
      for (const char* part : bench::kTimeParts) out += " " + mean_seconds(l, part) + " |";
      out += "\n";
    }
  }
  out += "\n## Problems\n\n";
  out += "| level | problem | status | correct | = eager | eager ms | torch.compile ms | optimized ms | speedup | "
         "wall ms (compile → optimized) | kernels ms (compile → optimized) | host-bound | accepted kernels | "
         "vendor share | peak mem | reason |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& r : array(b, "rows")) {
    const json& acc = array(r, "accepted");
    std::string accepted = format_count(r, "accepted_count") + "/" + format_count(r, "kernels");
    for (const json& a : acc) accepted += " " + (a.is_string() ? a.get<std::string>() : std::string());
    for (const json& a : array(r, "fused")) accepted += " + " + (a.is_string() ? a.get<std::string>() : std::string());
    out += fmt::format("| {} | {} | {} | {} | {} | ", text(r, "level"), cell(text(r, "problem")), cell(text(r, "status")),
                       yes_no(r, "correct"), yes_no(r, "matches_eager"));
    if (measured && boolean(r, "measured").value_or(false)) {
      out += fmt::format("{} | {} | {} | {} | {} → {} | {} → {} | {} | ", ms3(r, "eager", "device_ms"),
                         ms3(r, "compiled", "device_ms"), ms3(r, "optimized", "device_ms"),
                         format_speedup(number(r, "speedup")), ms3(r, "compiled", "wall_ms"),
                         ms3(r, "optimized", "wall_ms"), ms3(r, "compiled", "kernel_ms"),
                         ms3(r, "optimized", "kernel_ms"), yes_no(r, "host_bound"));
    } else {
      out += "not measured | not measured | not measured | — | — | — | — | ";
    }
    out += fmt::format("{} | {} | {} | {} |\n", cell(accepted), format_share(number(r, "vendor_share")), peak_mem_cell(r),
                       cell(text(r, "reason")));
  }
  out += "\nSpeedup: torch.compile's GPU time per call over the optimized model's, both through the same call path "
         "(docs/bench.md). A fallback keeps torch.compile's modules and counts 1.0×. Host-bound: torch.compile's "
         "wall time per call is more than twice its kernels' time, so a kernel speedup barely reaches the user. Peak mem: "
         "the most device memory the problem's worker held at once (its job and the bench's timing), and that over "
         "torch.compile's own peak for one call of the model.\n";
  return out;
}

std::string peak_mem_cell(const json& r, std::string_view open, std::string_view close) {
  const json& m = object(r, "memory");
  auto peak = number(m, "peak_bytes");
  if (boolean(m, "measured") != true || !peak) return kDash;
  auto ratio = number(m, "ratio");
  return ratio ? fmt::format("{}{}{:.1f}x{}", format_mem(peak), open, *ratio, close) : format_mem(peak);
}

// "NVIDIA H200 (torch … · triton …) · budget 60 s per problem · shard 0/1 · 31 of 31 problems"
std::string bench_setup_line(const json& b) {
  std::string dev = text(b, "gpu");
  if (dev.empty()) dev = text(b, "device") == "cpu" ? "CPU (Triton interpreter)" : text(b, "device");
  const json& s = object(b, "settings");
  std::string shards;
  for (const json& x : array(b, "shards")) shards += (shards.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : "");
  return fmt::format("{} ({}) · budget {} per problem · agents {} · shard {} · {} of {} problems", cell(dev),
                     versions_line(b), format_seconds(number(s, "budget_s")), cell(text(s, "agents")), cell(shards),
                     array(b, "rows").size(), format_count(b, "expected"));
}

void write_bench_outputs(const json& b, const std::filesystem::path& dir) {
  std::string lines;
  for (const json& r : array(b, "rows"))
    lines += r.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  write_file_atomic(dir / "results.jsonl", lines);
  write_file_atomic(dir / "report.md", render_bench_markdown(b));
  write_file_atomic(dir / "report.html", render_bench_html(b));
}

}  // namespace kopt::report
