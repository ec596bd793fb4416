// The inline SVG charts of report.html: horizontal bar groups on one linear scale, and one
// stacked bar for the parts of a whole. Labels and values go through escape_html.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::report::svg {

struct Series {
  std::string css, legend;
};
struct Bar {
  std::optional<double> value;
  std::string text;  // shown after the bar (already formatted, plain)
};
struct Row {
  std::string label;
  std::vector<Bar> bars;  // one per series
};

// Horizontal bars, one group per row, one bar per series, all on one linear scale.
std::string hbar_chart(const std::string& id, const std::string& label, const std::vector<Series>& series,
                       const std::vector<Row>& rows);

// One stacked bar: the parts of a whole, each segment labelled below.
std::string stacked_chart(const std::string& id, const std::string& label, const std::vector<Series>& series,
                          const std::vector<Bar>& parts);

// How many code points `s` holds (UTF-8): the columns it takes in a terminal, roughly the width in a chart.
size_t code_points(std::string_view s);
// Text cut to `max` code points (the last replaced by "…"), after clean().
std::string truncate(std::string_view s, size_t max);
// Text cut to `max` code points by taking out its middle ("triton_red_fused_…_amax_sub_1"): kernel names
// differ at both ends (their kind up front, their ops and index at the back). After clean().
std::string elide_middle(std::string_view s, size_t max);

// The longest label a chart shows whole; longer ones are elided in the middle (the full name on hover).
inline constexpr size_t kLabelChars = 56;

}  // namespace kopt::report::svg
