#include "agents/coder/templates/columns.h"

#include <utility>

#include <fmt/format.h>

namespace kopt::agents::templates {

std::vector<std::string> split_columns(const std::string& var, int64_t width, int64_t rows) {
  int bits = 0;
  while ((int64_t{1} << bits) < width) ++bits;
  std::string dims;
  for (int b = 0; b < bits; ++b) dims += ", 2";
  std::vector<std::string> lines = {fmt::format("{}_ = tl.reshape({}, [{}{}])", var, var, rows, dims)};
  std::vector<std::pair<int64_t, std::string>> parts = {{0, var + "_"}};  // (index bits so far, name)
  for (int b = 0; b < bits; ++b) {
    std::vector<std::pair<int64_t, std::string>> next;
    for (const auto& [idx, name] : parts) {
      lines.push_back(fmt::format("{0}e, {0}o = tl.split({0})", name));
      next.emplace_back(idx, name + "e");
      next.emplace_back(idx | (int64_t{1} << b), name + "o");
    }
    parts = std::move(next);
  }
  for (const auto& [idx, name] : parts) lines.push_back(fmt::format("{}_{} = {}", var, idx, name));
  return lines;
}

std::vector<std::string> join_columns(std::vector<std::string> columns, int64_t rows, const std::string& out) {
  std::vector<std::string> lines;
  const size_t v = columns.size();
  int k = 0;
  while (columns.size() > 1) {
    size_t half = columns.size() / 2;
    std::vector<std::string> next;
    for (size_t i = 0; i < half; ++i) {
      std::string nm = fmt::format("{}_j{}", out, k++);
      lines.push_back(fmt::format("{} = tl.join({}, {})", nm, columns[i], columns[i + half]));
      next.push_back(nm);
    }
    columns = std::move(next);
  }
  lines.push_back(fmt::format("{} = tl.reshape({}, [{}, {}])", out, columns[0], rows, v));
  return lines;
}

}  // namespace kopt::agents::templates
