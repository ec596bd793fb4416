// `kernelopt bench merge DIR... --out DIR`: the rows of several shard runs (each
// DIR/run.json + DIR/results.jsonl, as copied back from wherever the shard ran)
// combined into one table. Runs made under other settings are refused: one table holds one
// configuration. A problem present in two inputs is refused too, unless --later-wins: then the
// row of the run given last stands (a re-run of part of the suite over a whole run), the table
// says how many rows were replaced, and the problems expected are the union's.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "pipeline/bench_problem.h"
#include "report/bench_report.h"
#include "report/report.h"
#include "util/error.h"

namespace kopt::cli {

namespace fs = std::filesystem;
using nlohmann::json;

int bench_merge(const BenchMergeOptions& o) {
  if (o.dirs.empty()) throw UserError("bench merge: give the shard directories to merge, e.g. bench merge out/s0 out/s1 --out out/all");
  json settings = nullptr, shards = json::array();
  std::string suite;
  size_t expected = 0, count = 0;
  std::set<size_t> indices;
  std::map<std::string, std::pair<std::string, size_t>> seen;  // problem -> the directory it came from, its row
  std::vector<json> rows;
  size_t replaced = 0;
  for (const std::string& d : o.dirs) {
    fs::path dir(d);
    std::ifstream rf(dir / "run.json");
    if (!rf) throw UserError(fmt::format("{}: no run.json; pass directories written by `kernelopt bench --out`", d));
    std::stringstream rs;
    rs << rf.rdbuf();
    json run = json::parse(rs.str(), nullptr, false);
    if (run.is_discarded() || !run.contains("settings"))
      throw UserError(fmt::format("{}/run.json: not a bench run file; pass directories written by `kernelopt bench`", d));
    if (settings.is_null()) settings = run["settings"], suite = run.value("suite", "");
    else if (run["settings"] != settings)
      throw UserError(fmt::format("{} ran with other settings ({}) than {} ({}); merge runs of one configuration", d,
                                  run["settings"].dump(), o.dirs.front(), settings.dump()));
    std::string shard = run.value("shard", "0/1");
    shards.push_back(shard);
    size_t slash = shard.find('/');
    indices.insert(std::stoul(shard.substr(0, slash)));
    count = std::stoul(shard.substr(slash + 1));
    expected += run.value("expected", 0);
    std::ifstream jf(dir / "results.jsonl");
    if (!jf) throw UserError(fmt::format("{}: no results.jsonl; the shard has not finished a problem yet", d));
    size_t line_no = 0;
    for (std::string line; std::getline(jf, line);) {
      ++line_no;
      if (line.empty()) continue;
      json row = json::parse(line, nullptr, false);
      if (row.is_discarded() || !row.is_object())
        throw UserError(fmt::format("{}/results.jsonl:{}: not a JSON row; re-run that shard to rewrite it", d, line_no));
      std::string id = row.value("problem", "");
      if (row.contains("result_dir") && row["result_dir"].is_string())
        row["result_dir"] = (dir / row["result_dir"].get<std::string>()).string();
      if (auto [it, fresh] = seen.emplace(id, std::pair{d, rows.size()}); !fresh) {
        if (!o.later_wins)
          throw UserError(fmt::format("{} is in both {} and {}; merge each shard once (or pass --later-wins to keep "
                                      "the last run's row)",
                                      id, it->second.first, d));
        it->second.first = d;
        rows[it->second.second] = std::move(row);
        ++replaced;
        continue;
      }
      rows.push_back(std::move(row));
    }
  }
  // Re-runs of part of a suite share shard numbers with the run they replace rows of: the union's
  // problems are what the table covers.
  if (o.later_wins) expected = seen.size();
  std::string missing;
  for (size_t i = 0; i < count; ++i)
    if (!indices.count(i)) missing += fmt::format(" {}/{}", i, count);
  if (!missing.empty())
    std::cerr << fmt::format("[bench] warning: shard(s){} not given; the table covers part of the suite\n", missing);
  fs::path out(o.out.empty() ? "merged.bench" : o.out);
  fs::create_directories(out);
  json run = {{"format", "kernelopt-bench-run"}, {"merged_from", o.dirs}, {"settings", settings},
              {"shards", shards}, {"suite", suite}, {"expected", expected}};
  if (o.later_wins) run["rows_replaced"] = replaced;
  report::detail::write_file_atomic(out / "run.json", run.dump(2) + "\n");
  json b = pipeline::bench_object(suite, settings, shards, expected, rows);
  report::write_bench_outputs(b, out);
  if (o.json) {
    std::cout << b.dump(2) << "\n";
    return 0;
  }
  std::cout << report::render_bench_terminal(b) << "\n";
  std::cout << fmt::format("merged {0} row(s) from {1} director(ies){3}; wrote {2}/report.md, {2}/report.html, "
                           "{2}/results.jsonl\n",
                           rows.size(), o.dirs.size(), out.string(),
                           o.later_wins ? fmt::format(", {} replaced by a later run's", replaced) : "");
  return 0;
}

}  // namespace kopt::cli
