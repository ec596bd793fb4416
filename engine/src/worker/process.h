// One worker process: spawned in its own process group with pipes on
// stdin/stdout/stderr, spoken to in JSON lines. Killing it kills the group, so
// anything the worker started (Triton compile workers, ...) dies with it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::worker {

struct ProcessSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the parent's environment
};

// Why a request failed at the process level (the worker's own failures are
// ordinary replies with "ok": false).
enum class Failure { None, Timeout, Crashed, ProtocolError };
const char* failure_name(Failure f);

class Process {
 public:
  explicit Process(ProcessSpec spec);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Sends one JSON line and waits for one JSON line back. On timeout, crash or
  // garbage the process is killed and `failure` says why.
  std::optional<nlohmann::json> request(const nlohmann::json& req, std::chrono::milliseconds timeout,
                                        Failure& failure);
  bool alive();
  void kill();                  // SIGKILL the whole process group and reap it
  std::string stderr_tail();    // last few KiB the worker wrote to stderr
  pid_t pid() const { return pid_; }
  int exit_status() const { return exit_status_; }

 private:
  void start();
  void drain_stderr();
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline, Failure& failure);

  ProcessSpec spec_;
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  int exit_status_ = -1;
  std::string out_buf_;
  std::thread err_thread_;
  std::mutex err_mu_;
  std::string err_tail_;
};

}  // namespace kopt::worker
