#include "agents/coder/rewrites/softplus.h"

#include <regex>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"

namespace kopt::agents::rewrites {

using detail::count_word;

std::optional<Softplus> softplus(const std::string& source, std::string* why) {
  auto no = [&](const std::string& w) -> std::optional<Softplus> {
    if (why) *why = "softplus: " + w;
    return std::nullopt;
  };
  if (source.find("tl.float64") != std::string::npos)
    return no("a float64 kernel (the approximations are float32 ones)");
  // Inductor's statements, one a line: `T = libdevice.exp(A)` ... `U = libdevice.log1p(T)`.
  static const std::regex exp_line(R"(^([ ]+)(\w+) = libdevice\.exp\(([^\n]+)\)$)");
  std::vector<std::string> lines;
  {
    size_t start = 0;
    for (size_t nl; (nl = source.find('\n', start)) != std::string::npos; start = nl + 1)
      lines.push_back(source.substr(start, nl - start));
    lines.push_back(source.substr(start));
  }
  int n = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, exp_line)) continue;
    const std::string ind = m[1], t = m[2], a = m[3];
    // T read once, by the log1p, in a later statement of the same function (Inductor names each value once
    // within a function; a helper `@triton.jit` function of the same source has its own tmpN).
    size_t begin = i, end = i + 1;
    while (begin > 0 && !lines[begin].starts_with("def ")) --begin;
    while (end < lines.size() && !lines[end].starts_with("def ") && !lines[end].starts_with("@")) ++end;
    std::string body;
    for (size_t j = begin; j < end; ++j) body += lines[j] + "\n";
    if (count_word(body, t) != 2) continue;
    const std::regex log_line("^" + ind + R"((\w+) = libdevice\.log1p\()" + t + R"(\)$)");
    for (size_t j = i + 1; j < end; ++j) {
      std::smatch l;
      if (!std::regex_match(lines[j], l, log_line)) continue;
      lines[i] = fmt::format("{}{} = tl.math.exp2(({}) * 1.4426950408889634)", ind, t, a);
      lines[j] = fmt::format("{}{} = tl.math.log2(1.0 + {}) * 0.6931471805599453", ind, l[1].str(), t);
      ++n;
      break;
    }
  }
  if (n == 0) return no("no `libdevice.log1p(T)` of a `T = libdevice.exp(...)` read by nothing else");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return Softplus{out, n};
}

}  // namespace kopt::agents::rewrites
