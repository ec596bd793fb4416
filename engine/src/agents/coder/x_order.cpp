#include "agents/coder/x_order.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/source_edit.h"

namespace kopt::agents::rewrites {

using namespace detail;

namespace {

// The index the program's lane takes in the new digit order: digit `order[0]` varies fastest.
std::string permuted_index(const std::vector<int64_t>& stride, const std::vector<int64_t>& extent,
                           const std::vector<size_t>& order) {
  std::string out;
  int64_t below = 1;  // how many program indices one step of the current digit spans
  for (size_t i = 0; i < order.size(); ++i) {
    size_t d = order[i];
    std::string part = below == 1 ? "xlin" : fmt::format("(xlin // {})", below);
    if (i + 1 < order.size()) part = fmt::format("({} % {})", part, extent[d]);
    out += (out.empty() ? "" : " + ") + (stride[d] == 1 ? part : fmt::format("{} * {}", part, stride[d]));
    below *= extent[d];
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> x_order(const std::string& source, const std::string& name,
                                                         std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, "x order: " + reason);
    return std::vector<std::pair<std::string, std::string>>{};
  };
  auto ks = parse(source, name, why);
  if (!ks) return {};
  const py::Node* entry = ks->entry;
  std::string body = text_of(source, entry);
  // Program order must not matter: no atomics, no second grid axis (a split scan's lookback
  // reads earlier programs' results).
  if (body.find("atomic") != std::string::npos) return no("the kernel uses atomics");
  static const std::regex pid(R"(tl\.program_id\((\d)\))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), pid); it != std::sregex_iterator(); ++it)
    if ((*it)[1] != "0") return no("the kernel has more than one grid axis");
  static const std::regex numel(R"(^xnumel = (\d+)$)"), offset(R"(^xoffset = tl\.program_id\(0\) \* XBLOCK$)"),
      index(R"(^xindex = xoffset \+ tl\.arange\(0, XBLOCK\)(\[[^\]]*\])?$)"), masked(R"(^xmask = xindex < xnumel$)"),
      unmasked(R"(^xmask = tl\.full\(\[XBLOCK\], True, tl\.int1\)(\[[^\]]*\])?$)");
  int64_t n = 0;
  const py::Node *index_stmt = nullptr, *mask_stmt = nullptr;
  bool has_offset = false, has_mask = false;
  std::string suffix;
  for (const py::Node* s : entry->list("body")) {
    std::string t = text_of(source, s);
    std::smatch m;
    if (std::regex_match(t, m, numel)) n = std::stoll(m[1]);
    else if (std::regex_match(t, offset)) has_offset = true;
    else if (std::regex_match(t, m, index)) index_stmt = s, suffix = m[1];
    else if (std::regex_match(t, masked)) mask_stmt = s, has_mask = true;
    else if (std::regex_match(t, unmasked)) has_mask = true;
  }
  if (n <= 1 || n >= (int64_t{1} << 31)) return no("xnumel is not a constant below 2^31 in the kernel");
  if (!has_offset || !index_stmt || !has_mask) return no("the x index is not Inductor's `xoffset + tl.arange` form");
  static const std::regex offset_use(R"(\bxoffset\b)");
  if (std::distance(std::sregex_iterator(body.begin(), body.end(), offset_use), std::sregex_iterator()) != 2)
    return no("xoffset is used beyond the x index");
  // Digit boundaries: xindex // S, (xindex // S) % A (boundary S*A), xindex % A.
  std::set<int64_t> bounds = {1};
  static const std::regex div_mod(R"(\(xindex // (\d+)\) % (\d+))"), div(R"(xindex // (\d+))"), mod(R"(xindex % (\d+))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), div_mod); it != std::sregex_iterator(); ++it)
    bounds.insert(std::stoll((*it)[1]) * std::stoll((*it)[2]));
  for (const std::regex* r : {&div, &mod})
    for (auto it = std::sregex_iterator(body.begin(), body.end(), *r); it != std::sregex_iterator(); ++it)
      bounds.insert(std::stoll((*it)[1]));
  std::vector<int64_t> stride, extent;
  for (int64_t b : bounds)
    if (b < n) stride.push_back(b);
  for (size_t i = 0; i < stride.size(); ++i) {
    int64_t next = i + 1 < stride.size() ? stride[i + 1] : n;
    if (next % stride[i] != 0) return no(fmt::format("its digits do not nest ({} does not divide {})", stride[i], next));
    extent.push_back(next / stride[i]);
  }
  if (stride.size() < 2) return no("the x index has a single digit");
  std::string indent(index_stmt->begin.col, ' ');
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t j = 1; j < stride.size(); ++j) {
    std::vector<size_t> order = {j};
    for (size_t d = 0; d < stride.size(); ++d)
      if (d != j) order.push_back(d);
    std::vector<Edit> edits = {{index_stmt->begin.offset, index_stmt->end.offset,
                                fmt::format("xlin = xoffset + tl.arange(0, XBLOCK){}\n{}xindex = {}", suffix, indent,
                                            permuted_index(stride, extent, order))}};
    if (mask_stmt) edits.push_back({mask_stmt->begin.offset, mask_stmt->end.offset, "xmask = xlin < xnumel"});
    out.emplace_back(fmt::format("x order: the digit of stride {} ({} values) fastest", stride[j], extent[j]),
                     apply(source, edits));
  }
  return out;
}

}  // namespace kopt::agents::rewrites
