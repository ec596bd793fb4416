// The suite runner's outputs (docs/bench.md): results.jsonl (one row per problem),
// report.md and report.html (self-contained: the per-level table, the speedup
// distribution as an inline SVG chart, the per-problem rows in a sortable table).
//
// The object rendered (format "kernelopt-bench"): suite, device,
// performance_measured, gpu, versions, settings, shards, expected (problems in the
// selection), levels (bench::summarize of the rows), rows. Renderers are pure
// functions of it and never throw on its content; nothing measured (CPU mode) shows
// as "not measured", never as a speedup. The tables hold no clock value, so the same
// rows give the same tables (a resumed or merged run can be compared line by line).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kopt::report {

std::string render_bench_markdown(const nlohmann::json& bench);
std::string render_bench_html(const nlohmann::json& bench);
// What `kernelopt bench` prints on stdout: the per-level table, where the time went and one line per
// problem, every line at most kTerminalWidth columns (report.md and report.html hold every column).
std::string render_bench_terminal(const nlohmann::json& bench);
inline constexpr size_t kTerminalWidth = 120;

// A row's peak device memory, "23.4 GiB (1.8x)" (peak over the problem, and that over torch.compile's
// own peak for one call; `open`/`close` wrap the ratio), or "—" when the row's memory was not measured.
std::string peak_mem_cell(const nlohmann::json& row, std::string_view open = " (", std::string_view close = ")");

// "NVIDIA H200 (torch … · triton …) · budget 60 s per problem · … · 31 of 31 problems".
std::string bench_setup_line(const nlohmann::json& bench);

namespace detail {
// Whether any level carries per-stage times; a level's mean seconds of one part of `time` ("12.3", or "—").
bool timed(const nlohmann::json& bench);
std::string mean_seconds(const nlohmann::json& level, const char* part);
}  // namespace detail

// DIR/results.jsonl, DIR/report.md, DIR/report.html, each written whole and renamed into place.
void write_bench_outputs(const nlohmann::json& bench, const std::filesystem::path& dir);

}  // namespace kopt::report
