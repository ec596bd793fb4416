// The results database (SQLite): measured GPU ceilings cached per GPU model and
// software versions, and every decision record the pipeline makes. One file,
// written in transactions, so a killed run loses nothing it had finished.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace kopt::results {

class ResultsDb {
 public:
  explicit ResultsDb(const std::string& path);  // creates the file and schema as needed
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  // Ceilings measured by a worker ("ceilings" op) for this GPU and these versions.
  std::optional<nlohmann::json> ceilings(const std::string& gpu, const std::string& torch,
                                         const std::string& triton);
  void put_ceilings(const std::string& gpu, const std::string& torch, const std::string& triton,
                    const nlohmann::json& ceilings);

  // Appends a decision record (kind: "baseline", "profile", "gate", ...) keyed by `key`.
  void add_record(const std::string& kind, const std::string& key, const nlohmann::json& record);
  size_t count_records(const std::string& kind);
  // The newest record of `kind` under `key`: the search's cache (a re-run measures nothing new).
  std::optional<nlohmann::json> latest_record(const std::string& kind, const std::string& key);

  // $KERNELOPT_DB, else $XDG_CACHE_HOME/kernelopt/results.db, else ~/.cache/kernelopt/results.db.
  static std::string default_path();

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace kopt::results
