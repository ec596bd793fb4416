#include "bench/suite.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "util/error.h"

namespace kopt::bench {

namespace fs = std::filesystem;

namespace {

bool parse_size(const std::string& s, size_t& out) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  out = std::stoul(s);
  return true;
}

}  // namespace

std::vector<int> parse_levels(const std::string& spec) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t v = 0;
    if (!parse_size(item, v) || v < 1 || v > 9)
      throw UserError(fmt::format("--levels {}: give level numbers separated by commas, e.g. --levels 1,2,3", spec));
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end()) out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Problem> discover(const std::string& suite_dir, const std::vector<int>& levels,
                              std::vector<std::string>* notes) {
  fs::path root(suite_dir);
  if (!fs::is_directory(root))
    throw UserError(fmt::format("{}: not a directory; pass a suite directory holding level1/, level2/, level3/",
                                suite_dir));
  std::vector<Problem> out;
  for (int level : levels) {
    fs::path dir = root / fmt::format("level{}", level);
    if (!fs::is_directory(dir)) {
      if (notes) notes->push_back(fmt::format("{}: no such folder; level {} skipped", dir.string(), level));
      continue;
    }
    std::vector<Problem> here;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '_' || name[0] == '.') continue;
      Problem p;
      p.level = level;
      p.id = fmt::format("level{}/{}", level, name);
      p.path = e.path().string();
      if (e.is_directory() && fs::is_regular_file(e.path() / "meta.json")) {
        p.bundle = true;
        p.name = name;
      } else if (e.is_regular_file() && e.path().extension() == ".py") {
        p.name = e.path().stem().string();
      } else {
        continue;
      }
      here.push_back(std::move(p));
    }
    std::sort(here.begin(), here.end(), [](const Problem& a, const Problem& b) { return a.id < b.id; });
    out.insert(out.end(), here.begin(), here.end());
  }
  if (out.empty())
    throw UserError(fmt::format("{}: no problems in level{}/; a level folder holds problem .py files or bundle "
                                "directories (with meta.json)",
                                suite_dir, fmt::join(levels, "/, level")));
  return out;
}

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(const std::string& spec) {
  if (spec.empty()) return {};
  size_t slash = spec.find('/');
  Shard s;
  if (slash == std::string::npos || !parse_size(spec.substr(0, slash), s.index) ||
      !parse_size(spec.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count)
    throw UserError(fmt::format("--shard {}: give I/N with 0 <= I < N, e.g. --shard 0/4 for the first of four shards",
                                spec));
  return s;
}

std::vector<Problem> select_shard(const std::vector<Problem>& all, const Shard& s) {
  std::vector<Problem> out;
  for (size_t k = 0; k < all.size(); ++k)
    if (k % s.count == s.index) out.push_back(all[k]);
  return out;
}

}  // namespace kopt::bench
