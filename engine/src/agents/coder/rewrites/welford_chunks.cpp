#include "agents/coder/rewrites/welford_chunks.h"

#include <regex>

#include <fmt/format.h>

namespace kopt::agents::rewrites {

namespace {

// Occurrences of a whole word.
size_t count_word(const std::string& s, const std::string& w) {
  std::regex re("\\b" + w + "\\b");
  return static_cast<size_t>(std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator()));
}

}  // namespace

std::optional<WelfordChunks> welford_chunks(const std::string& source, const std::string&, std::string* why) {
  auto no = [&](const std::string& w) -> std::optional<WelfordChunks> {
    if (why) *why = "welford chunks: " + w;
    return std::nullopt;
  };
  // Inductor's per-element update inside its `for r0_offset in tl.range(...)` loop (accumulator A, value V,
  // the loop's mask M), exactly as it writes it.
  static const std::regex update(
      R"(([ ]+)(\w+)_mean_next, \2_m2_next, \2_weight_next = triton_helpers\.welford_reduce\(\n[ ]+(\w+), \2_mean, )"
      R"(\2_m2, \2_weight, roffset == 0\n[ ]+\)\n[ ]+\2_mean = tl\.where\(([^\n]+), \2_mean_next, \2_mean\)\n)"
      R"([ ]+\2_m2 = tl\.where\(\4, \2_m2_next, \2_m2\)\n)"
      R"([ ]+\2_weight = tl\.where\(\4, \2_weight_next, \2_weight\)\n)");
  std::string out;
  std::vector<std::string> accs;
  auto begin = source.cbegin();
  for (std::sregex_iterator it(source.begin(), source.end(), update), end; it != end; ++it) {
    const std::smatch& m = *it;
    std::string ind = m[1], a = m[2], v = m[3], mask = m[4];
    out.append(begin, m[0].first);
    out += fmt::format(
        "{0}{1}_n = tl.sum(tl.where({3}, 1.0, 0.0), 1)[:, None]\n"
        "{0}{1}_cmean = tl.sum(tl.where({3}, {2}, 0.0), 1)[:, None] / tl.maximum({1}_n, 1.0)\n"
        "{0}{1}_dev = tl.where({3}, {2} - {1}_cmean, 0.0)\n"
        "{0}{1}_mean, {1}_m2, {1}_weight = triton_helpers.welford_combine(\n"
        "{0}    {1}_mean, {1}_m2, {1}_weight, {1}_cmean, tl.sum({1}_dev * {1}_dev, 1)[:, None], {1}_n\n"
        "{0})\n",
        ind, a, v, mask);
    begin = m[0].second;
    accs.push_back(a);
  }
  if (accs.empty()) return no("no looped `triton_helpers.welford_reduce` update in Inductor's form");
  out.append(begin, source.cend());
  for (const std::string& a : accs) {
    // The accumulators become one value per row: their initializations, and nothing else of them but the
    // update above and the lanes' welford after the loop (a lane reduction over one lane: the row's values).
    for (const char* part : {"_mean", "_m2", "_weight"}) {
      std::string init = fmt::format("{}{} = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)", a, part);
      size_t at = out.find(init);
      if (at == std::string::npos || out.find(init, at + 1) != std::string::npos)
        return no(fmt::format("`{}` is not initialized once as Inductor does", a + part));
      out.replace(at, init.size(), fmt::format("{}{} = tl.zeros([XBLOCK, 1], tl.float32)", a, part));
    }
    std::string after = fmt::format("triton_helpers.welford({0}_mean, {0}_m2, {0}_weight, 1)", a);
    if (out.find(after) == std::string::npos) return no(fmt::format("no `{}` after the loop", after));
    // init, combine's target and argument, the lanes' welford: 4 uses each; anything else reads lanes.
    for (const char* part : {"_mean", "_m2", "_weight"})
      if (count_word(out, a + part) != 4) return no(fmt::format("{} is used besides the update", a + part));
  }
  return WelfordChunks{out, static_cast<int>(accs.size())};
}

}  // namespace kopt::agents::rewrites
