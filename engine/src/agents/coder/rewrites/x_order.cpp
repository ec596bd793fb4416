#include "agents/coder/rewrites/x_order.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/x_index.h"
#include "artifact/pyparse/edit.h"

namespace kopt::agents::rewrites {

using py::Edit;
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
  auto x = x_index(source, entry, "x order", why);
  if (!x) return {};
  const int64_t n = x->numel;
  const py::Node* index_stmt = x->index_stmt;
  // An unmasked kernel's mask stays as it is (all lanes of a full tile are in range).
  const py::Node* mask_stmt = x->mask_is_full ? nullptr : x->mask_stmt;
  if (count_words(body, "xoffset") != 2) return no("xoffset is used beyond the x index");
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
                                fmt::format("xlin = xoffset + tl.arange(0, XBLOCK){}\n{}xindex = {}", x->suffix, indent,
                                            permuted_index(stride, extent, order))}};
    if (mask_stmt) edits.push_back({mask_stmt->begin.offset, mask_stmt->end.offset, "xmask = xlin < xnumel"});
    out.emplace_back(fmt::format("x order: the digit of stride {} ({} values) fastest", stride[j], extent[j]),
                     py::apply_edits(source, edits));
  }
  return out;
}

}  // namespace kopt::agents::rewrites
