// Helpers shared by the engine's unit tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "worker/supervisor.h"

namespace kopt::testing {

// A whole file as bytes ("" when it cannot be read: the test's own assertions then fail).
inline std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A bundle of the committed corpus (corpus/NAME).
inline std::unique_ptr<ir::Bundle> corpus(const std::string& name) {
  return ir::load_bundle((std::filesystem::path(KOPT_SOURCE_DIR) / "corpus" / name).string());
}

// A launch argument: a contiguous tensor of `shape`.
inline nlohmann::json tensor(std::vector<int64_t> shape, std::string dtype = "float32") {
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  return {{"shape", shape}, {"stride", stride}, {"dtype", dtype}};
}

// `s` with the first `from` replaced by `to`; a test failure when `from` is not there.
inline std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

// A copy of the bundle at `dir` (relative to the source tree) in the temp directory as `name`, each `from`
// of its module_0.py made its `to` (the first occurrence; a test failure when one is not there).
inline std::filesystem::path edited_copy(const std::string& dir, const std::string& name,
                                         const std::vector<std::pair<std::string, std::string>>& edits) {
  std::filesystem::path out = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(out);
  std::filesystem::copy(std::filesystem::path(KOPT_SOURCE_DIR) / dir, out,
                        std::filesystem::copy_options::recursive);
  std::string text = read((out / "module_0.py").string());
  for (const auto& [from, to] : edits) text = replaced(text, from, to);
  std::ofstream(out / "module_0.py") << text;
  return out;
}

// A launch argument: a scalar.
inline nlohmann::json value(int64_t v) { return {{"value", v}}; }

// One CPU worker of the project's own Python package (the interpreter runs the kernels).
inline worker::SupervisorOptions cpu_worker() {
  worker::SupervisorOptions o;
  o.argv = {"python3", "-m", "kernelopt.worker"};
  o.env["PYTHONPATH"] = std::string(KOPT_SOURCE_DIR) + "/python";
  o.slots = {"cpu"};
  return o;
}

}  // namespace kopt::testing
