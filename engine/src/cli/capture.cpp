// `kernelopt capture PROBLEM.py --out BUNDLE`: torch.compile must run inside
// PyTorch, so the engine hands this to the worker's capture module, which owns
// the exit code and its one-line errors.
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "cli/commands.h"
#include "util/error.h"

namespace kopt::cli {

std::string python_executable() {
  const char* p = std::getenv("KERNELOPT_PYTHON");
  return p && *p ? p : "python3";
}

int capture(const CaptureOptions& o) {
  std::vector<std::string> argv = {python_executable(), "-m", "kernelopt.worker.capture", o.problem, "--out", o.out,
                                   "--mode", o.mode, "--seed", std::to_string(o.seed), "--device", o.device};
  if (!o.dtype.empty()) argv.insert(argv.end(), {"--dtype", o.dtype});
  if (o.force) argv.push_back("--force");
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  execvp(cargv[0], cargv.data());
  throw UserError(fmt::format("cannot run {}: set KERNELOPT_PYTHON to a Python with torch and kernelopt installed",
                              argv[0]));
}

}  // namespace kopt::cli
