// The suite runner's inputs: which problems a suite directory holds, and which
// of them one shard runs. A suite is SUITE_DIR/level1/, level2/, level3/, each
// holding problem files (Model, get_inputs(), get_init_inputs()) and/or bundle
// directories (meta.json, captured earlier: CPU mode runs those).
#pragma once

#include <string>
#include <vector>

namespace kopt::bench {

struct Problem {
  int level = 0;
  std::string id;    // relative to the suite: "level1/gelu.py" or "level1/softmax" (a bundle)
  std::string path;  // SUITE_DIR joined with id
  std::string name;  // the file's stem or the bundle's folder name
  bool bundle = false;
};

// "1,2,3" -> {1, 2, 3}; user errors name the fix.
std::vector<int> parse_levels(const std::string& spec);

// Every problem of the given levels, sorted by level then id (byte order), so every machine
// lists a suite the same way. A missing level folder adds a line to `notes`; a suite with no
// problem at all is a UserError. Skipped: files starting with "_" or ".", non-.py files,
// folders without meta.json.
std::vector<Problem> discover(const std::string& suite_dir, const std::vector<int>& levels,
                              std::vector<std::string>* notes);

struct Shard {
  size_t index = 0, count = 1;
  std::string text() const;  // "I/N"
};
// "I/N" with 0 <= I < N; empty: the whole suite (0/1).
Shard parse_shard(const std::string& spec);

// Round-robin over the sorted list: problem k goes to shard k mod N. Deterministic for a given
// suite, balanced within one problem, and it spreads every level over all shards.
std::vector<Problem> select_shard(const std::vector<Problem>& all, const Shard& s);

}  // namespace kopt::bench
