#include "results/key.h"

#include <fmt/format.h>

#include "verify/cascade.h"

namespace kopt::results {

using nlohmann::json;

namespace {

// The launch shapes a kernel ran with: part of every cache key (same source, other shapes, other result).
std::string shape_key(const std::vector<json>& launches) {
  json shapes = json::array();
  for (const json& l : launches) shapes.push_back(l.value("args", json::array()));
  return verify::source_hash(shapes.dump());
}

}  // namespace

std::string cache_key(const std::string& prefix, const std::string& kernel_source, const std::vector<json>& launches,
                      const std::string& candidate_hash) {
  return fmt::format("{}|{}|{}|{}", prefix, verify::source_hash(kernel_source), shape_key(launches), candidate_hash);
}

}  // namespace kopt::results
