// Comma-separated option values ("0,1,3" for --gpus), shared by the commands that take lists.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace kopt {

// The non-empty items of `s` split at `sep`, in order ("0,,1" -> {"0", "1"}).
inline std::vector<std::string> split_list(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace kopt
