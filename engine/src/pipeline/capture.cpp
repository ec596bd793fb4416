// Capturing a problem in a child process, bounded by a timeout (pipeline/capture.h).
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <cerrno>
#include <cstdio>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <vector>

#include <fmt/format.h>

#include "pipeline/capture.h"
#include "pipeline/workers.h"
#include "util/error.h"
#include "util/gpu_env.h"

namespace kopt::pipeline {

std::vector<std::string> capture_argv(const CaptureOptions& o) {
  std::vector<std::string> argv = {python_executable(), "-m", "kernelopt.worker.capture", o.problem, "--out", o.out,
                                   "--mode", o.mode, "--seed", std::to_string(o.seed), "--device", o.device};
  if (o.cpu_kernels != "cpp") argv.insert(argv.end(), {"--cpu-kernels", o.cpu_kernels});
  if (!o.dtype.empty()) argv.insert(argv.end(), {"--dtype", o.dtype});
  if (o.force) argv.push_back("--force");
  if (o.json) argv.push_back("--json");
  if (o.quiet) argv.push_back("--quiet");
  if (!o.autotune_cache) argv.push_back("--no-autotune-cache");
  return argv;
}

bool is_kernel_file(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (std::regex_search(text, std::regex(R"((^|\n)(class Model\b|from \S+ import .*\bModel\b|Model\s*=))")))
    return false;
  // As input_kind: without a Model, a file that imports triton or helion; any other is a problem missing
  // its Model, which the capture reports.
  return std::regex_search(text, std::regex(R"((^|\n)[ \t]*(import[ \t]+([\w.]+[ \t]*,[ \t]*)*|from[ \t]+)(triton|helion)\b)"));
}

bool capture_in_worker() {
  const char* v = std::getenv("KERNELOPT_CAPTURE_IN_WORKER");
  return v == nullptr || std::string(v) != "0";
}

int capture_and_wait(const CaptureOptions& o, std::string* error_line) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> argv = capture_argv(o);
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  const std::string device = o.gpu.empty() ? "" : visible_device(o.gpu);  // before fork: it may throw
  int fds[2] = {-1, -1};
  if (error_line && pipe(fds) != 0) throw UserError("cannot start the capture: pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw UserError("cannot start the capture: fork failed");
  if (pid == 0) {
    setpgid(0, 0);  // a group of its own: a timeout ends the compile workers it started too
    if (!device.empty()) setenv("CUDA_VISIBLE_DEVICES", device.c_str(), 1);
    if (error_line) {
      dup2(fds[1], 1), dup2(fds[1], 2);
      close(fds[0]), close(fds[1]);
    }
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  const bool bounded = o.timeout_s > 0;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(bounded ? o.timeout_s : 0);
  auto left_ms = [&]() -> int {
    if (!bounded) return -1;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return ms > 0 ? static_cast<int>(std::min<int64_t>(ms, 1 << 30)) : 0;
  };
  bool timed_out = false, reaped = false;
  int status = 0;
  std::string held;  // the last error line, not yet echoed
  if (error_line) {
    // Echo the child's lines to stderr and keep its last one-line error for the caller, which reports it:
    // that line is held back, so that it is printed once (an earlier error line is echoed when a later
    // one replaces it).
    close(fds[1]);
    std::string pending;
    auto take = [&](const std::string& line) {
      if (auto at = line.find("error: "); at != std::string::npos) {
        if (!held.empty()) std::fprintf(stderr, "%s\n", held.c_str());
        held = line, *error_line = line.substr(at + 7);
      } else {
        std::fprintf(stderr, "%s\n", line.c_str());
      }
    };
    char buf[4096];
    auto feed = [&](ssize_t n) {  // what one read gave: its whole lines handed over, the rest kept
      pending.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
        take(pending.substr(0, nl));
    };
    for (;;) {
      // The capture's own exit ends the wait, not the pipe's end: its compile workers (a process group of
      // its own, stderr inherited) may hold the pipe open for seconds after it has exited.
      pollfd p{fds[0], POLLIN, 0};
      int left = left_ms();
      int ready = poll(&p, 1, left < 0 ? 250 : std::min(left, 250));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (left_ms() == 0) {
          timed_out = true;
          break;
        }
        if (waitpid(pid, &status, WNOHANG) == pid) {
          reaped = true;
          // What it wrote before it exited, without waiting for the pipe's end.
          for (pollfd q{fds[0], POLLIN, 0}; poll(&q, 1, 0) > 0;) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0) break;
            feed(n);
          }
          break;
        }
        continue;
      }
      ssize_t n = ready < 0 ? -1 : read(fds[0], buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      feed(n);
    }
    if (!pending.empty()) take(pending);
    close(fds[0]);
  }
  while (!reaped) {
    if (timed_out) kill(-pid, SIGKILL), kill(pid, SIGKILL);
    pid_t w = waitpid(pid, &status, bounded && !timed_out ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (left_ms() == 0) timed_out = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The held line is the caller's to report only when the capture failed of its own.
  if (!held.empty() && (timed_out || (WIFEXITED(status) && WEXITSTATUS(status) == 0)))
    std::fprintf(stderr, "%s\n", held.c_str());
  if (timed_out) {
    std::string why = fmt::format("the capture did not finish within {} s and was stopped (raise --timeout)", o.timeout_s);
    if (error_line) *error_line = why;
    else std::fprintf(stderr, "kernelopt: error: %s\n", why.c_str());
    return 124;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw UserError(fmt::format("cannot run {}: set KERNELOPT_PYTHON to a Python with torch and kernelopt installed",
                                argv[0]));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace kopt::pipeline
