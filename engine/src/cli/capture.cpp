// `kernelopt capture PROBLEM.py --out BUNDLE`: torch.compile must run inside
// PyTorch, so the engine hands this to the worker's capture module, which owns
// the exit code and its one-line errors (pipeline/capture.h).
#include <unistd.h>

#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "util/error.h"

namespace kopt::cli {

int capture(const pipeline::CaptureOptions& o) {
  std::vector<std::string> argv = pipeline::capture_argv(o);
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  execvp(cargv[0], cargv.data());
  throw UserError(fmt::format("cannot run {}: set KERNELOPT_PYTHON to a Python with torch and kernelopt installed",
                              argv[0]));
}

}  // namespace kopt::cli
