// The report of `kernelopt optimize`: one JSON object (format "kernelopt-report",
// format_version 1, documented field by field in docs/report.md) rendered three
// ways — report.json (the object itself), report.md and report.html (one
// self-contained file: inline CSS, inline SVG charts drawn here, a little inline
// JS, nothing fetched from the network).
//
// Renderers never throw on the report's content: any field may be missing, null
// or of the wrong type, and is then shown as "—" or "not measured". When
// `performance_measured` is not true (CPU mode), no kernel or module time and no
// speedup is shown as performance. Output is a pure function of the object
// (no clock, no randomness), so the same report renders to the same bytes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kopt::report {

// Writes dir/report.json (pretty), dir/report.md and dir/report.html, creating
// dir as needed; each file is written whole and then renamed into place. Throws
// kopt::UserError naming the path when the directory cannot be written.
void write_reports(const nlohmann::json& report, const std::filesystem::path& dir);

std::string render_markdown(const nlohmann::json& report);
std::string render_html(const nlohmann::json& report);

// Helpers shared by the renderers (report_common.cpp); exposed for the tests.
namespace detail {

// Null-safe field access: nullptr when `j` is not an object, the key is missing or the value is null.
const nlohmann::json* field(const nlohmann::json& j, std::string_view key);
// The value when it is a finite number, else nullopt.
std::optional<double> number(const nlohmann::json& j, std::string_view key);
// The value when it is a string, the number/boolean printed when it is one, else "".
std::string text(const nlohmann::json& j, std::string_view key);
// The value when it is a boolean, else nullopt.
std::optional<bool> boolean(const nlohmann::json& j, std::string_view key);
// The array (or object) at `key`, or an empty one.
const nlohmann::json& array(const nlohmann::json& j, std::string_view key);
const nlohmann::json& object(const nlohmann::json& j, std::string_view key);

// True only when the report says `performance_measured: true`.
bool performance_measured(const nlohmann::json& report);

// Invalid UTF-8 replaced by U+FFFD, control characters (tabs and newlines included) by spaces.
std::string clean(std::string_view s);
// For text content and attribute values: & < > " ' escaped (after clean()).
std::string escape_html(std::string_view s);

inline constexpr const char* kDash = "—";
// Milliseconds, seconds, speedup ("1.25×"), ratio, bytes ("268.4 MB"), FLOPs ("1.1 GFLOP"), counts;
// each gives kDash for nullopt.
std::string format_ms(std::optional<double> ms);
std::string format_seconds(std::optional<double> s);
std::string format_speedup(std::optional<double> x);
std::string format_bytes(std::optional<double> b);
std::string format_flops(std::optional<double> f);
// Matrix-multiply FLOPs as the reports show them: a kernel without tl.dot counts 0 (its elementwise
// arithmetic is not counted), shown as "none counted (no tl.dot)" rather than "0 FLOP".
std::string format_matmul_flops(std::optional<double> f);
// A share as a whole percentage ("42%").
std::string format_share(std::optional<double> share);
std::string format_count(const nlohmann::json& j, std::string_view key);
// Memory sizes in binary units, as torch.cuda and nvidia-smi give them: "23.4 GiB", "512.0 MiB".
std::string format_mem(std::optional<double> bytes);
// The report's `memory` in one line: "Peak device memory: 23.4 GiB, 1.83x torch.compile's own peak for
// one call of the model (12.8 GiB)", or "... not measured (CPU mode)"; "" when the report has none.
std::string memory_line(const nlohmann::json& report);
// "2.37×" when both are present and the floor is positive.
std::string format_above_floor(std::optional<double> ms, std::optional<double> floor_ms);

// "passed" / "failed" / "not measured", or the raw status text.
std::string status_words(std::string_view status);
// "accepted", "rejected at G2", "screened out", "not run", or the raw outcome text.
std::string outcome_words(const nlohmann::json& candidate);

// The kernel's time after optimization: optimized_ms, else (when the kernel fell back) baseline_ms.
std::optional<double> after_ms(const nlohmann::json& kernel);

// The report page's CSS and script (sortable tables, rendered-chart counts), shared by the
// suite report (bench_report.h).
const char* html_style();
const char* html_script();
// Writes `bytes` to a temporary name, then renames it into place (throws UserError naming the path).
void write_file_atomic(const std::filesystem::path& path, const std::string& bytes);

// "torch 2.11.0 · triton 3.6.0 · cuda 13.0" (kDash when empty).
std::string versions_line(const nlohmann::json& report);
// "copy 4.25 TB/s · fp32 51.0 TFLOP/s · ..." (kDash when null).
std::string ceilings_line(const nlohmann::json& report);
// "3 kernels, 1 accepted, 12 candidates; rejected at G1 0 · G2 1 · ..." from `summary`.
std::string summary_line(const nlohmann::json& report);

// The accepted config of a kernel the user wrote, as the line to paste into its source: for a Triton kernel
// file's @triton.autotune kernel `triton.Config({'BLOCK': 128}, num_warps=4, num_stages=2)`; for a Helion
// kernel (the report's kernel carries `helion_config`, the config it was captured with) that config with the
// winner's launch options, `helion.Config(block_sizes=[1024], num_warps=8, num_stages=2)`. "" when the kernel is
// Inductor's own, nothing was accepted, or the winner changed what a Helion config cannot say.
std::string winning_config(const nlohmann::json& kernel);

}  // namespace detail

}  // namespace kopt::report
