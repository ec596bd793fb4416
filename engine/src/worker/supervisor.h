// A pool of workers, one per GPU (or N on CPU), serving requests from many
// threads. A worker that crashes, hangs or reports a corrupted CUDA context is
// killed with its process group and replaced; the request that hit it becomes a
// failure record carrying the reason and the worker's stderr tail. Requests are
// never retried here: the caller (the cascade) decides what a failure means.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "worker/process.h"

namespace kopt::worker {

// A worker that did not come up. `replied`: it ran and said why (e.g. no GPU);
// otherwise it died or never answered (wrong Python, kernelopt not installed).
struct WorkerStartError : std::runtime_error {
  bool replied;
  WorkerStartError(const std::string& what, bool replied_) : std::runtime_error(what), replied(replied_) {}
};

struct SupervisorOptions {
  std::vector<std::string> argv;         // the worker command (python -m kernelopt.worker)
  std::map<std::string, std::string> env;
  std::vector<std::string> slots;        // one entry per worker: a GPU index ("0") or "cpu"
  std::chrono::milliseconds start_timeout{120000};  // for the hello handshake
};

class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions o);
  ~Supervisor();

  // Sends `req` to an idle worker and returns its reply. Process-level failures
  // come back as {"ok": false, "failure": "timeout"|"crashed"|"protocol_error",
  // "error": ..., "stderr_tail": ...}.
  nlohmann::json call(nlohmann::json req, std::chrono::milliseconds timeout);
  // Sends `req` to every worker in turn (waiting for each to be idle) and returns their replies in
  // slot order: per-process state such as device memory is only complete when every worker answers.
  std::vector<nlohmann::json> call_each(const nlohmann::json& req, std::chrono::milliseconds timeout);

  // The hello replies of the workers (versions, device, ceilings).
  std::vector<nlohmann::json> hellos();
  size_t replacements() const { return replacements_.load(); }
  void shutdown();  // kills every worker; call() afterwards fails fast
  bool down();     // shut down (an interrupt): replies since are "shutdown" failures, not the candidates' doing

 private:
  struct Slot {
    std::string device;
    std::unique_ptr<Process> proc;
    nlohmann::json hello;
    bool busy = false;
  };
  void start(Slot& s);
  // Runs `req` on `s`, which the caller has marked busy; frees it and replaces a failed worker.
  nlohmann::json run_on(Slot& s, nlohmann::json req, std::chrono::milliseconds timeout);

  SupervisorOptions opts_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<size_t> replacements_{0};
  std::atomic<uint64_t> next_id_{1};
  bool down_ = false;
};

// Installs SIGINT/SIGTERM handlers that ask every live Supervisor to shut down (killing worker process
// groups) and say so on stderr. Then, unless a job catches interrupts (below), they re-raise the signal's
// default action; a second signal always does.
void install_shutdown_handlers();
// While true, the first SIGINT/SIGTERM leaves the process running once the workers are stopped: the job
// (pipeline/job.h) notices through interrupted(), writes its partial report and ends with interrupted_exit.
void catch_interrupts(bool on);
// The signal that interrupted the process (SIGINT, SIGTERM), or 0; and a signal's name ("SIGINT").
int interrupted();
std::string signal_name(int sig);
// Thrown by a job that was interrupted, after its partial report: main exits with 128 + the signal.
struct Interrupted : std::runtime_error {
  int signal;
  Interrupted(int sig, const std::string& what) : std::runtime_error(what), signal(sig) {}
};

}  // namespace kopt::worker
