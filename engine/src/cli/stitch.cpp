// `kernelopt stitch MODULE.py [--replace NAME=KERNEL.py ...] [-o OUT]`.
#include "stitch/stitch.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "util/error.h"

namespace kopt::cli {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open file; check the path", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int stitch(const StitchOptions& o) {
  auto art = ir::load(o.module);
  std::vector<stitch::Replacement> reps;
  for (const std::string& spec : o.replace) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UserError(fmt::format("--replace {}: expected NAME=KERNEL.py", spec));
    std::string path = spec.substr(eq + 1);
    reps.push_back({spec.substr(0, eq), read_file(path), path});
  }
  std::string out = stitch::stitch(*art, reps);
  ir::build(out, o.output.empty() ? "<stitched>" : o.output);  // the result must still be a valid module
  if (o.output.empty()) {
    std::cout << out;
    return 0;
  }
  // Write beside the target and rename, so a failure never leaves half a file.
  std::string tmp = o.output + ".kopt-tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << out;
    if (!f) throw UserError(fmt::format("{}: cannot write; check the directory exists and is writable", o.output));
  }
  std::filesystem::rename(tmp, o.output);
  return 0;
}

}  // namespace kopt::cli
