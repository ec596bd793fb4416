// An artifact bundle on disk (docs/bundle.md): meta.json, problem.py and one
// module_N.py per captured graph. Loading checks every file before anything
// downstream runs, so a broken bundle fails with one line naming the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::ir {

struct Bundle {
  std::string dir;
  nlohmann::json meta;
  std::vector<std::unique_ptr<Artifact>> graphs;  // one per meta.graphs entry, in order
};

bool is_bundle_dir(const std::string& path);
std::unique_ptr<Bundle> load_bundle(const std::string& dir);

}  // namespace kopt::ir
