#include "results/db.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "util/error.h"

namespace kopt::results {

namespace {

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(fmt::format("results database: {}", sqlite3_errmsg(db)));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) throw std::runtime_error(fmt::format("results database: {}", sqlite3_errmsg(db_)));
    return false;
  }
  std::string text(int col) {
    const unsigned char* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t integer(int col) { return sqlite3_column_int64(s_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

std::string now_iso() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string ResultsDb::default_path() {
  if (const char* p = std::getenv("KERNELOPT_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kernelopt/results.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/kernelopt/results.db";
}

ResultsDb::ResultsDb(const std::string& path) : path_(path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw UserError(fmt::format("{}: cannot open the results database ({}); pass --db with a writable path", path,
                                msg));
  }
  sqlite3_busy_timeout(db_, 10000);  // shards of one run may share the file
  exec("PRAGMA journal_mode=WAL");
  exec(R"(CREATE TABLE IF NOT EXISTS ceilings(
            gpu TEXT, torch TEXT, triton TEXT, data TEXT NOT NULL, measured_at TEXT NOT NULL,
            PRIMARY KEY (gpu, torch, triton)))");
  exec(R"(CREATE TABLE IF NOT EXISTS records(
            id INTEGER PRIMARY KEY, kind TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
            created TEXT NOT NULL))");
  exec("CREATE INDEX IF NOT EXISTS records_kind_key ON records(kind, key)");
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

void ResultsDb::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw UserError(fmt::format("{}: results database error ({}); delete the file or pass another --db", path_, msg));
  }
}

std::optional<nlohmann::json> ResultsDb::ceilings(const std::string& gpu, const std::string& torch,
                                                  const std::string& triton) {
  Stmt s(db_, "SELECT data FROM ceilings WHERE gpu = ? AND torch = ? AND triton = ?");
  s.bind(1, gpu).bind(2, torch).bind(3, triton);
  if (!s.step()) return std::nullopt;
  return nlohmann::json::parse(s.text(0));
}

void ResultsDb::put_ceilings(const std::string& gpu, const std::string& torch, const std::string& triton,
                             const nlohmann::json& ceilings) {
  Stmt s(db_, "INSERT OR REPLACE INTO ceilings(gpu, torch, triton, data, measured_at) VALUES (?, ?, ?, ?, ?)");
  s.bind(1, gpu).bind(2, torch).bind(3, triton).bind(4, ceilings.dump()).bind(5, now_iso());
  s.step();
}

void ResultsDb::add_record(const std::string& kind, const std::string& key, const nlohmann::json& record) {
  Stmt s(db_, "INSERT INTO records(kind, key, data, created) VALUES (?, ?, ?, ?)");
  s.bind(1, kind).bind(2, key).bind(3, record.dump()).bind(4, now_iso());
  s.step();
}

std::optional<nlohmann::json> ResultsDb::latest_record(const std::string& kind, const std::string& key) {
  Stmt s(db_, "SELECT data FROM records WHERE kind = ? AND key = ? ORDER BY rowid DESC LIMIT 1");
  s.bind(1, kind).bind(2, key);
  if (!s.step()) return std::nullopt;
  return nlohmann::json::parse(s.text(0));
}

size_t ResultsDb::count_records(const std::string& kind) {
  Stmt s(db_, "SELECT COUNT(*) FROM records WHERE kind = ?");
  s.bind(1, kind);
  s.step();
  return static_cast<size_t>(s.integer(0));
}

}  // namespace kopt::results
