#include "report/report_svg.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/report.h"

namespace kopt::report::svg {

using namespace detail;

namespace {

std::string h(std::string_view s) { return escape_html(s); }

std::string px(double v) { return fmt::format("{:.1f}", v); }

// The plot keeps its width; the label column grows with the longest label (up to kLabelChars at about
// 7 px per character of the 12-px font), so names are not cut at a fixed 34 characters.
constexpr double kWidth = 760, kValueW = 96, kPlotW = 400, kCharW = 7.0;

// Where each code point of `s` (UTF-8) starts.
std::vector<size_t> code_point_starts(std::string_view s) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  return starts;
}

std::string legend(const std::vector<Series>& series, double x, double y) {
  std::string out;
  for (const auto& s : series) {
    out += fmt::format("<rect class=\"key {}\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/>", s.css, px(x), px(y));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", px(x + 14), px(y + 9), h(s.legend));
    x += 28 + 7.0 * static_cast<double>(s.legend.size());
  }
  return out;
}

}  // namespace

size_t code_points(std::string_view s) { return code_point_starts(s).size(); }

std::string truncate(std::string_view s, size_t max) {
  std::string c = clean(s);
  std::vector<size_t> starts = code_point_starts(c);
  if (max == 0 || starts.size() <= max) return c;
  return c.substr(0, starts[max - 1]) + "…";
}

std::string elide_middle(std::string_view s, size_t max) {
  std::string c = clean(s);
  std::vector<size_t> starts = code_point_starts(c);
  if (max < 3 || starts.size() <= max) return max < 3 ? truncate(c, max) : c;
  size_t head = (max - 1) / 2, tail = max - 1 - head;
  return c.substr(0, starts[head]) + "…" + c.substr(starts[starts.size() - tail]);
}

std::string hbar_chart(const std::string& id, const std::string& label, const std::vector<Series>& series,
                       const std::vector<Row>& rows) {
  const double bar_h = series.size() > 1 ? 11 : 14, gap = 2, pad = 10, top = series.size() > 1 ? 26 : 6;
  const double group_h = static_cast<double>(series.size()) * (bar_h + gap) - gap;
  double max = 0;
  for (const auto& r : rows)
    for (const auto& b : r.bars)
      if (b.value) max = std::max(max, *b.value);
  double height = top + static_cast<double>(rows.size()) * (group_h + pad) + 4;
  size_t longest = 8;
  for (const auto& r : rows) longest = std::max(longest, std::min(code_points(clean(r.label)), kLabelChars));
  const double label_w = 16 + kCharW * static_cast<double>(longest), width = label_w + kPlotW + kValueW + 8;
  std::string out = fmt::format(
      "<svg class=\"chart\" id=\"{}\" role=\"img\" aria-label=\"{}\" "
      "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
      id, h(label), px(width), px(height), px(width), px(height));
  if (series.size() > 1) out += legend(series, label_w, 6);
  double y = top;
  for (const auto& r : rows) {
    out += fmt::format("<g class=\"row\"><title>{}</title>", h(r.label));
    out += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", px(label_w - 8),
                       px(y + group_h / 2 + 4), h(elide_middle(r.label, kLabelChars)));
    for (size_t i = 0; i < r.bars.size() && i < series.size(); ++i) {
      const Bar& b = r.bars[i];
      double by = y + static_cast<double>(i) * (bar_h + gap);
      double w = b.value && max > 0 && *b.value > 0 ? std::max(1.0, *b.value / max * kPlotW) : 0;
      if (w > 0)
        out += fmt::format("<rect class=\"bar {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}: {}</title></rect>",
                           series[i].css, px(label_w), px(by), px(w), px(bar_h), h(series[i].legend), h(b.text));
      out += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}</text>", px(label_w + w + 4), px(by + bar_h - 2),
                         h(b.text));
    }
    out += "</g>";
    y += group_h + pad;
  }
  out += "</svg>\n";
  return out;
}

std::string stacked_chart(const std::string& id, const std::string& label, const std::vector<Series>& series,
                          const std::vector<Bar>& parts) {
  double total = 0;
  for (const auto& p : parts) total += p.value.value_or(0);
  const double bar_w = kWidth - 20, height = 76;
  std::string out = fmt::format(
      "<svg class=\"chart\" id=\"{}\" role=\"img\" aria-label=\"{}\" "
      "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
      id, h(label), px(kWidth), px(height), px(kWidth), px(height));
  double x = 10, lx = 10;
  for (size_t i = 0; i < parts.size() && i < series.size(); ++i) {
    double v = parts[i].value.value_or(0);
    double w = total > 0 ? v / total * bar_w : 0;
    std::string share = total > 0 ? fmt::format("{:.0f}%", 100 * v / total) : std::string(kDash);
    std::string caption = fmt::format("{}: {} ({})", series[i].legend, parts[i].text, share);
    if (w > 0)
      out += fmt::format("<rect class=\"bar {}\" x=\"{}\" y=\"8\" width=\"{}\" height=\"28\"><title>{}</title></rect>",
                         series[i].css, px(x), px(w), h(caption));
    out += fmt::format("<rect class=\"key {}\" x=\"{}\" y=\"52\" width=\"10\" height=\"10\"/>", series[i].css, px(lx));
    out += fmt::format("<text x=\"{}\" y=\"61\">{}</text>", px(lx + 14), h(caption));
    x += w;
    lx += 40 + 7.0 * static_cast<double>(caption.size());
  }
  out += "</svg>\n";
  return out;
}

}  // namespace kopt::report::svg
