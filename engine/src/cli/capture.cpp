// `kernelopt capture PROBLEM.py --out BUNDLE`: torch.compile must run inside
// PyTorch, so the engine hands this to the worker's capture module, which owns
// the exit code and its one-line errors.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <cstdlib>
#include <vector>

#include "cli/commands.h"
#include "util/error.h"

namespace kopt::cli {

std::string python_executable() {
  const char* p = std::getenv("KERNELOPT_PYTHON");
  return p && *p ? p : "python3";
}

namespace {

std::vector<std::string> capture_argv(const CaptureOptions& o) {
  std::vector<std::string> argv = {python_executable(), "-m", "kernelopt.worker.capture", o.problem, "--out", o.out,
                                   "--mode", o.mode, "--seed", std::to_string(o.seed), "--device", o.device};
  if (!o.dtype.empty()) argv.insert(argv.end(), {"--dtype", o.dtype});
  if (o.force) argv.push_back("--force");
  return argv;
}

}  // namespace

int capture(const CaptureOptions& o) {
  std::vector<std::string> argv = capture_argv(o);
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  execvp(cargv[0], cargv.data());
  throw UserError(fmt::format("cannot run {}: set KERNELOPT_PYTHON to a Python with torch and kernelopt installed",
                              argv[0]));
}

}  // namespace kopt::cli

namespace kopt::cli {

int capture_and_wait(const CaptureOptions& o) {
  std::vector<std::string> argv = capture_argv(o);
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw UserError("cannot start the capture: fork failed");
  if (pid == 0) {
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw UserError(fmt::format("cannot run {}: set KERNELOPT_PYTHON to a Python with torch and kernelopt installed",
                                argv[0]));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace kopt::cli
