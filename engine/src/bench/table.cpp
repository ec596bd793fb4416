#include "bench/table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace kopt::bench {

using nlohmann::json;

namespace {

std::optional<double> num(const json& row, const char* key) {
  if (!row.is_object() || !row.contains(key) || !row[key].is_number()) return std::nullopt;
  double v = row[key].get<double>();
  return std::isfinite(v) && v > 0 ? std::optional<double>(v) : std::nullopt;
}

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

bool is_true(const json& row, const char* key) {
  return row.is_object() && row.contains(key) && row[key].is_boolean() && row[key].get<bool>();
}

json level_stats(const std::string& level, const std::vector<const json*>& rows) {
  size_t n = rows.size(), optimized = 0, fallback = 0, errors = 0, correct = 0, host_bound = 0;
  std::vector<double> all, only_opt, wall;
  double won = 0, available = 0;
  size_t headroom_n = 0;
  std::map<std::string, std::vector<double>> stage;  // per-stage seconds of the rows that have them
  std::vector<double> fast(std::size(kFastP), 0.0), fast_eager(std::size(kFastP), 0.0), eager;
  bool measured = false;
  std::optional<double> max_peak_ratio;
  for (const json* r : rows) {
    // Peak device memory over torch.compile's own: only measured rows (a CPU worker's accounting is not).
    if (const json& m = (*r).value("memory", json()); is_true(m, "measured"))
      if (auto x = num(m, "ratio")) max_peak_ratio = std::max(max_peak_ratio.value_or(0.0), *x);
    std::string status = (*r).contains("status") && (*r)["status"].is_string() ? (*r)["status"].get<std::string>() : "error";
    optimized += status == "optimized", fallback += status == "fallback", errors += status == "error";
    if (const json& st = (*r).value("stages", json()); st.is_object()) {
      auto s = [&](std::initializer_list<const char*> ks) {
        double sum = 0;
        for (const char* k : ks) sum += st.contains(k) && st[k].is_number() ? st[k].get<double>() : 0.0;
        return sum;
      };
      double total = (*r).value("seconds", 0.0) + s({"capture_ahead"});
      std::map<std::string, double> part = {{"capture", s({"capture_ahead", "load"})},
                                            {"start", s({"workers", "ceilings"})},
                                            {"measure", s({"baseline", "launches", "profile"})},
                                            {"search", s({"plan", "search", "regions"})},
                                            {"verify", s({"stitch", "end_to_end", "write"})},
                                            {"bench", s({"bench_check", "bench_times"})}};
      double named = 0;
      for (auto& [k, v] : part) named += v, stage[k].push_back(v);
      stage["other"].push_back(total - named);  // so the parts add up to the total
      stage["total"].push_back(total);
    }
    bool ok = is_true(*r, "correct");
    correct += ok;
    host_bound += is_true(*r, "host_bound");
    std::optional<double> sp = num(*r, "speedup");
    if (!sp || status == "error") continue;
    measured = true;
    all.push_back(*sp);
    if (status == "optimized") only_opt.push_back(*sp);
    if (auto w = num(*r, "wall_speedup")) wall.push_back(*w);
    auto floor = num(*r, "floor_ms");
    auto base = (*r).contains("compiled") ? num((*r)["compiled"], "device_ms") : std::nullopt;
    if (floor && base && *base >= kHeadroomAbove * *floor)
      won += std::log(*sp), available += std::log(*base / *floor), ++headroom_n;
    auto se = eager_speedup(*r);
    if (se) eager.push_back(*se);
    for (size_t i = 0; i < std::size(kFastP); ++i) {
      fast[i] += ok && *sp > kFastP[i];
      fast_eager[i] += ok && se && *se > kFastP[i];
    }
  }
  // Means, not medians: means of parts add up to the mean of their sum.
  json time = json::object();
  for (auto& [name, xs] : stage) {
    double sum = 0;
    for (double x : xs) sum += x;
    time[name] = sum / static_cast<double>(xs.size());
  }
  json fp = json::object(), fpe = json::object();
  for (size_t i = 0; i < std::size(kFastP); ++i) {
    fp[p_label(kFastP[i])] = measured && n ? json(fast[i] / static_cast<double>(n)) : json(nullptr);
    fpe[p_label(kFastP[i])] = measured && n ? json(fast_eager[i] / static_cast<double>(n)) : json(nullptr);
  }
  return {{"level", level},
          {"problems", n},
          {"optimized", optimized},
          {"fallback", fallback},
          {"errors", errors},
          {"correct", correct},
          {"correct_rate", n ? json(static_cast<double>(correct) / static_cast<double>(n)) : json(nullptr)},
          {"measured", measured},
          {"geomean", opt(geomean(all))},
          {"geomean_n", all.size()},
          {"geomean_optimized", opt(geomean(only_opt))},
          {"optimized_n", only_opt.size()},
          {"fast_p", fp},
          {"geomean_eager", opt(geomean(eager))},
          {"fast_p_eager", fpe},
          {"wall_geomean", opt(geomean(wall))},
          {"host_bound", host_bound},
          {"headroom", available > 0 ? json(won / available) : json(nullptr)},
          {"headroom_n", headroom_n},
          {"time", time},
          {"time_n", stage["total"].size()},
          {"max_peak_ratio", opt(max_peak_ratio)}};
}

}  // namespace

std::string p_label(double p) { return p == std::floor(p) ? fmt::format("{:.1f}", p) : fmt::format("{}", p); }

std::optional<double> eager_speedup(const json& row) {
  if (!row.is_object() || !row.contains("eager") || !row.contains("optimized")) return std::nullopt;
  auto e = num(row["eager"], "device_ms"), o = num(row["optimized"], "device_ms");
  return e && o ? std::optional<double>(*e / *o) : std::nullopt;
}

std::optional<double> geomean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  double s = 0;
  for (double x : xs) s += std::log(x);
  return std::exp(s / static_cast<double>(xs.size()));
}

json summarize(const std::vector<json>& rows) {
  std::map<int, std::vector<const json*>> by_level;
  std::vector<const json*> every;
  for (const json& r : rows) {
    by_level[r.value("level", 0)].push_back(&r);
    every.push_back(&r);
  }
  json out = json::array();
  for (const auto& [level, rs] : by_level) out.push_back(level_stats(std::to_string(level), rs));
  if (by_level.size() > 1) out.push_back(level_stats("all", every));
  return out;
}

}  // namespace kopt::bench
