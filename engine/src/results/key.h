// The key the search's records are cached under in the results database: the same candidate for the
// same kernel, launch shapes, GPU, software versions and gate settings is measured once.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::results {

// `prefix`: the GPU model, versions and gate settings (search::SearchOptions::cache_prefix);
// `launches`: the kernel's launch records (same source, other shapes, other result);
// `candidate_hash`: verify::source_hash of the candidate's source.
std::string cache_key(const std::string& prefix, const std::string& kernel_source,
                      const std::vector<nlohmann::json>& launches, const std::string& candidate_hash);

}  // namespace kopt::results
