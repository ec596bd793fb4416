// Helpers shared by the engine's unit tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kopt::testing {

// A whole file as bytes ("" when it cannot be read: the test's own assertions then fail).
inline std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kopt::testing
