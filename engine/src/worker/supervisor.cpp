#include "worker/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "util/gpu_env.h"

namespace kopt::worker {

namespace {
std::mutex g_live_mu;
std::set<Supervisor*> g_live;

std::atomic<int> g_signal{0};
std::atomic<bool> g_catch{false};

void say(const char* line) {
  ssize_t n = write(STDERR_FILENO, line, strlen(line));  // write(2): safe in a signal handler
  (void)n;
}

void on_signal(int sig) {
  int first = 0;
  bool again = !g_signal.compare_exchange_strong(first, sig);
  say(again ? "\nkernelopt: interrupted again; stopping now\n"
      : g_catch ? "\nkernelopt: interrupted; stopping the workers and writing a partial report (again to stop now)\n"
                : "\nkernelopt: interrupted; stopping the workers\n");
  // Best effort from a signal handler: kill the worker groups so none outlive us.
  // (try_lock: never deadlock if the signal lands while the set is being edited.)
  if (g_live_mu.try_lock()) {
    for (Supervisor* s : g_live) s->shutdown();
    g_live_mu.unlock();
  }
  if (g_catch && !again) return;  // the job sees interrupted() and writes what it has
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void install_shutdown_handlers() {
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
}

void catch_interrupts(bool on) { g_catch = on; }

int interrupted() { return g_signal.load(); }

std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : fmt::format("signal {}", sig);
}

Supervisor::Supervisor(SupervisorOptions o) : opts_(std::move(o)) {
  if (opts_.slots.empty()) opts_.slots.push_back("cpu");
  slots_.resize(opts_.slots.size());
  {
    // Registered before the first worker starts: a signal during start-up must reach it too.
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.insert(this);
  }
  try {
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].device = opts_.slots[i];
      start(slots_[i]);
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.erase(this);
    throw;
  }
}

Supervisor::~Supervisor() {
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.erase(this);
  }
  shutdown();
}

void Supervisor::start(Slot& s) {
  ProcessSpec spec{opts_.argv, opts_.env};
  if (s.device == "cpu") {
    spec.env["KERNELOPT_DEVICE"] = "cpu";
    spec.env["TRITON_INTERPRET"] = "1";
    spec.env["CUDA_VISIBLE_DEVICES"] = "";
  } else {
    spec.env["KERNELOPT_DEVICE"] = "cuda";
    spec.env["CUDA_VISIBLE_DEVICES"] = visible_device(s.device);  // one GPU per worker; inside it is cuda:0
    spec.env["TRITON_INTERPRET"] = "0";           // never inherit CPU mode's interpreter switch
  }
  s.proc = std::make_unique<Process>(spec);
  Failure f;
  auto hello = s.proc->request({{"id", 0}, {"op", "hello"}}, opts_.start_timeout, f);
  if (!hello || !hello->value("ok", false)) {
    std::string tail = s.proc->stderr_tail();
    s.proc->kill();
    if (hello) throw WorkerStartError(fmt::format("worker for device {} did not start: {}", s.device,
                                                  hello->value("error", "no reason given")), true);
    tail = tail.substr(tail.size() > 600 ? tail.size() - 600 : 0);
    throw WorkerStartError(fmt::format("worker for device {} did not start ({}){}", s.device, failure_name(f),
                                       tail.empty() ? "" : ": " + tail),
                           false);
  }
  s.hello = *hello;
}

std::vector<nlohmann::json> Supervisor::hellos() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<nlohmann::json> out;
  for (const Slot& s : slots_) out.push_back(s.hello);
  return out;
}

namespace {
nlohmann::json shutdown_reply() {
  return {{"ok", false}, {"failure", "shutdown"}, {"error", "kernelopt is shutting down"}};
}
}  // namespace

nlohmann::json Supervisor::call(nlohmann::json req, std::chrono::milliseconds timeout) {
  Slot* slot = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      return down_ || std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.busy; });
    });
    if (down_) return shutdown_reply();
    slot = &*std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.busy; });
    slot->busy = true;
  }
  return run_on(*slot, std::move(req), timeout);
}

std::vector<nlohmann::json> Supervisor::call_each(const nlohmann::json& req, std::chrono::milliseconds timeout) {
  std::vector<nlohmann::json> out;
  for (Slot& s : slots_) {  // slots_ never changes size after construction
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return down_ || !s.busy; });
      if (down_) {
        out.push_back(shutdown_reply());
        continue;
      }
      s.busy = true;
    }
    out.push_back(run_on(s, req, timeout));
  }
  return out;
}

nlohmann::json Supervisor::run_on(Slot& slot, nlohmann::json req, std::chrono::milliseconds timeout) {
  uint64_t id = next_id_++;
  req["id"] = id;
  Failure f = Failure::None;
  auto reply = slot.proc->request(req, timeout, f);
  nlohmann::json out;
  bool replace = false;
  if (reply) {
    out = std::move(*reply);
    // The worker says its CUDA context is unusable (illegal address, ...): answer, then replace it.
    replace = out.value("fatal", false);
  } else {
    std::string tail = slot.proc->stderr_tail();
    // A process that died says why on its last line (glibc's "double free or corruption", a Python fatal
    // error): the one-line error carries it, so a report row tells a crash from a kill.
    std::string last = tail.substr(0, tail.find_last_not_of(" \t\r\n") + 1);  // npos + 1: none, ""
    last = last.substr(last.rfind('\n') + 1);                                  // npos + 1: the whole text
    last.erase(0, last.find_first_not_of(" \t\r"));
    if (last.size() > 200) last = last.substr(0, 200) + "...";
    out = {{"ok", false},
           {"failure", failure_name(f)},
           {"error", f == Failure::Timeout ? fmt::format("no reply within {} ms; worker killed", timeout.count())
                     : last.empty()        ? std::string("worker process died or wrote garbage; worker replaced")
                                           : fmt::format("worker process died or wrote garbage (its last stderr "
                                                         "line: {}); worker replaced", last)},
           {"stderr_tail", tail}};
    replace = true;
  }
  if (replace && down()) {
    // Shut down under the request (an interrupt): the worker was killed on purpose; start no other.
    out = shutdown_reply();
  } else if (replace) {
    slot.proc->kill();
    try {
      start(slot);
      replacements_++;
    } catch (const std::exception& e) {
      out["replacement_error"] = e.what();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot.busy = false;
  }
  // All: a call_each waits for one particular worker, a call for any; one wake-up could miss either.
  cv_.notify_all();
  return out;
}

bool Supervisor::down() {
  std::lock_guard<std::mutex> lock(mu_);
  return down_;
}

void Supervisor::shutdown() {
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    down_ = true;
  }
  for (Slot& s : slots_)
    if (s.proc && s.proc->pid() > 0) ::kill(-s.proc->pid(), SIGKILL);
  cv_.notify_all();
}

}  // namespace kopt::worker
