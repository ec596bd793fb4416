#include "agents/coder/rewrites/softmax_chunks.h"

#include <regex>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"

namespace kopt::agents::rewrites {

using detail::count_word;

std::optional<SoftmaxChunks> softmax_chunks(const std::string& source, std::string* why) {
  auto no = [&](const std::string& w) -> std::optional<SoftmaxChunks> {
    if (why) *why = "softmax chunks: " + w;
    return std::nullopt;
  };
  // Inductor's update of accumulator A by value V under the loop's mask M, on one line or over several (the
  // segment split renders logical lines joined), blank lines between its statements allowed.
  static const std::regex update(
      R"(([ ]+)(\w+)_max_next, \2_sum_next = triton_helpers\.online_softmax_combine\(\s*\2_max, \2_sum, (\w+), )"
      R"((False|True)\s*\)\n(?:[ ]*\n)*[ ]+\2_max = tl\.where\(([^\n]+), \2_max_next, \2_max\)\n(?:[ ]*\n)*)"
      R"([ ]+\2_sum = tl\.where\(\5, \2_sum_next, \2_sum\)\n)");
  std::vector<std::string> accs;
  std::string out;
  auto begin = source.cbegin();
  for (std::sregex_iterator it(source.begin(), source.end(), update), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(begin, m[0].first);
    begin = m[0].second;
    std::string ind = m[1], a = m[2], v = m[3], mask = m[5];
    accs.push_back(a);
    // The chunk's masked values, the row's max raised by the chunk's, the lanes' sums rescaled once (a row
    // still at -inf keeps its sums: nothing of it counted yet), each element's exp against the new max.
    out += fmt::format(
        "{0}{1}_bv = tl.where({3}, {2}, float('-inf'))\n"
        "{0}{1}_bm = triton_helpers.maximum({1}_max, triton_helpers.max2({1}_bv, 1)[:, None])\n"
        "{0}{1}_sum = tl.where({1}_bm == float('-inf'), {1}_sum, {1}_sum * tl.math.exp2(({1}_max - {1}_bm) * "
        "1.4426950408889634) + tl.math.exp2(({1}_bv - {1}_bm) * 1.4426950408889634))\n"
        "{0}{1}_max = {1}_bm\n",
        ind, a, v, mask);
  }
  out.append(begin, source.cend());
  if (accs.empty()) return no("no looped `triton_helpers.online_softmax_combine` update in Inductor's form");
  for (const std::string& a : accs) {
    // The max becomes one value a row; the sums stay per lane.
    std::string init = fmt::format("{}_max = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)", a);
    size_t at = out.find(init);
    if (at == std::string::npos || out.find(init, at + 1) != std::string::npos)
      return no(fmt::format("`{}_max` is not initialized once as Inductor does", a));
    out.replace(at, init.size(), fmt::format("{}_max = tl.full([XBLOCK, 1], float('-inf'), tl.float32)", a));
    if (out.find(fmt::format("{}_sum = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)", a)) == std::string::npos)
      return no(fmt::format("`{}_sum` is not initialized as Inductor does", a));
    // After the loop the pair is reduced once over its lanes, as Inductor does; a [XBLOCK, 1] max reduces to
    // the row's max and leaves each lane's scale at exp(0).
    std::regex reduce(fmt::format(R"(online_softmax_reduce\(\s*{0}_max, {0}_sum, 1, (False|True)\))", a));
    if (!std::regex_search(out, reduce)) return no(fmt::format("no `online_softmax_reduce({0}_max, {0}_sum, 1, ...)`", a));
    // init, the chunk's max and scale, the update, the reduce: 5 uses each; anything else reads lanes.
    if (count_word(out, a + "_max") != 5 || count_word(out, a + "_sum") != 5 ||
        count_word(out, a + "_max_next") + count_word(out, a + "_sum_next") != 0)
      return no(fmt::format("`{0}_max` or `{0}_sum` is used besides the update and its reduce", a));
  }
  return SoftmaxChunks{out, static_cast<int>(accs.size())};
}

}  // namespace kopt::agents::rewrites
