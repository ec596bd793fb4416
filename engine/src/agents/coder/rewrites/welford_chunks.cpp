#include "agents/coder/rewrites/welford_chunks.h"

#include <regex>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"

namespace kopt::agents::rewrites {

using detail::count_word;

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
  // A split statistics kernel (a row's statistics over several programs, the last one partial) folds each
  // element in as a Welford triple of its own, masked to weight 0 past the row's end: the same division per
  // element, by `welford_combine` (a fresh draw's layer norm over 11 x 24 x 1024 x 563 bf16: 1.75x the
  // kernel's floor, no config faster). V, M and W name the element's mean, m2 and weight.
  static const std::regex combine(
      R"(([ ]+)(\w+)_mean_next, \2_m2_next, \2_weight_next = triton_helpers\.welford_combine\(\n[ ]+\2_mean, \2_m2, )"
      R"(\2_weight,\n[ ]+(\w+), (\w+), (\w+)\n[ ]+\)\n[ ]+\2_mean = tl\.where\(([^\n]+), \2_mean_next, \2_mean\)\n)"
      R"([ ]+\2_m2 = tl\.where\(\6, \2_m2_next, \2_m2\)\n)"
      R"([ ]+\2_weight = tl\.where\(\6, \2_weight_next, \2_weight\)\n)");
  // Each form's updates, replaced in turn; `accs` names the accumulators rewritten.
  std::vector<std::string> accs;
  auto replace_all = [&](const std::string& text, const std::regex& re, auto render) {
    std::string out;
    auto begin = text.cbegin();
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
      out.append(begin, (*it)[0].first);
      out += render(*it);
      begin = (*it)[0].second;
      accs.push_back((*it)[2]);
    }
    out.append(begin, text.cend());
    return out;
  };
  // The chunk's own statistics from the elements' triples (Chan's formula over the chunk: its weight, its
  // weighted mean, the elements' m2 plus their weighted squared deviations from that mean), merged once.
  std::string out = replace_all(source, combine, [](const std::smatch& m) {
    std::string ind = m[1], a = m[2], v = m[3], m2 = m[4], w = m[5], mask = m[6];
    return fmt::format(
        "{0}{1}_w = tl.where({5}, {4}, 0.0)\n"
        "{0}{1}_n = tl.sum({1}_w, 1)[:, None]\n"
        "{0}{1}_cmean = tl.sum(tl.where({5}, {1}_w * {2}, 0.0), 1)[:, None] / tl.where({1}_n > 0, {1}_n, 1.0)\n"
        "{0}{1}_dev = tl.where({5}, {2} - {1}_cmean, 0.0)\n"
        "{0}{1}_cm2 = tl.sum(tl.where({5}, {3}, 0.0) + {1}_w * {1}_dev * {1}_dev, 1)[:, None]\n"
        "{0}{1}_mean, {1}_m2, {1}_weight = triton_helpers.welford_combine(\n"
        "{0}    {1}_mean, {1}_m2, {1}_weight, {1}_cmean, {1}_cm2, {1}_n\n"
        "{0})\n",
        ind, a, v, m2, w, mask);
  });
  out = replace_all(out, update, [](const std::smatch& m) {
    std::string ind = m[1], a = m[2], v = m[3], mask = m[4];
    return fmt::format(
        "{0}{1}_n = tl.sum(tl.where({3}, 1.0, 0.0), 1)[:, None]\n"
        "{0}{1}_cmean = tl.sum(tl.where({3}, {2}, 0.0), 1)[:, None] / tl.maximum({1}_n, 1.0)\n"
        "{0}{1}_dev = tl.where({3}, {2} - {1}_cmean, 0.0)\n"
        "{0}{1}_mean, {1}_m2, {1}_weight = triton_helpers.welford_combine(\n"
        "{0}    {1}_mean, {1}_m2, {1}_weight, {1}_cmean, tl.sum({1}_dev * {1}_dev, 1)[:, None], {1}_n\n"
        "{0})\n",
        ind, a, v, mask);
  });
  if (accs.empty())
    return no("no looped `triton_helpers.welford_reduce` or split `welford_combine` update in Inductor's form");
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
