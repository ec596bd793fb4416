#include "worker/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"

namespace kopt::worker {

namespace {
constexpr size_t kStderrTail = 8192;

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the read side notices the dead process
    done += static_cast<size_t>(n);
  }
}
}  // namespace

const char* failure_name(Failure f) {
  switch (f) {
    case Failure::None: return "none";
    case Failure::Timeout: return "timeout";
    case Failure::Crashed: return "crashed";
    case Failure::ProtocolError: return "protocol_error";
  }
  return "?";
}

Process::Process(ProcessSpec spec) : spec_(std::move(spec)) { start(); }

Process::~Process() { kill(); }

void Process::start() {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw std::runtime_error(fmt::format("cannot create pipes: {}", std::strerror(errno)));
  // A worker that dies must not take the engine with it through SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid_ == 0) {
    setpgid(0, 0);
    dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
    for (const auto& [k, v] : spec_.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : spec_.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    dprintf(2, "cannot exec %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid_, pid_);  // also from the parent, so kill(-pid) works even before the child runs
  close(in[0]), close(out[1]), close(err[1]);
  in_fd_ = in[1], out_fd_ = out[0], err_fd_ = err[0];
  err_thread_ = std::thread([this] { drain_stderr(); });
}

void Process::drain_stderr() {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(err_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(err_mu_);
    err_tail_.append(buf, static_cast<size_t>(n));
    if (err_tail_.size() > 2 * kStderrTail) err_tail_.erase(0, err_tail_.size() - kStderrTail);
  }
}

std::string Process::stderr_tail() {
  std::lock_guard<std::mutex> lock(err_mu_);
  return err_tail_.size() > kStderrTail ? err_tail_.substr(err_tail_.size() - kStderrTail) : err_tail_;
}

bool Process::alive() {
  if (pid_ <= 0) return false;
  int status;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_status_ = status;
    ::kill(-pid_, SIGKILL);  // children the worker left behind
    pid_ = -1;
    return false;
  }
  return true;
}

void Process::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_status_ = status;
    pid_ = -1;
  }
  for (int* fd : {&in_fd_, &out_fd_}) {
    if (*fd >= 0) close(*fd), *fd = -1;
  }
  if (err_thread_.joinable()) err_thread_.join();  // ends at EOF once the group is dead
  if (err_fd_ >= 0) close(err_fd_), err_fd_ = -1;
}

std::optional<std::string> Process::read_line(std::chrono::steady_clock::time_point deadline, Failure& failure) {
  for (;;) {
    size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      failure = Failure::Timeout;
      return std::nullopt;
    }
    pollfd p{out_fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    char buf[65536];
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = Failure::Crashed;
      return std::nullopt;
    }
    out_buf_.append(buf, static_cast<size_t>(n));
  }
}

std::optional<nlohmann::json> Process::request(const nlohmann::json& req, std::chrono::milliseconds timeout,
                                               Failure& failure) {
  failure = Failure::None;
  if (!alive()) {
    failure = Failure::Crashed;
    return std::nullopt;
  }
  write_all(in_fd_, req.dump() + "\n");
  auto line = read_line(std::chrono::steady_clock::now() + timeout, failure);
  if (!line) {
    kill();
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(*line);
  } catch (const nlohmann::json::parse_error&) {
    failure = Failure::ProtocolError;
    std::lock_guard<std::mutex> lock(err_mu_);
    err_tail_ += "\n[kernelopt] worker wrote a non-JSON line on stdout: " + line->substr(0, 200);
  }
  kill();
  return std::nullopt;
}

}  // namespace kopt::worker
