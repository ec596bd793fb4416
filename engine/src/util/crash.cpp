#include "util/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>

namespace kopt::util {

namespace {

void on_crash(int sig) {
  // Only async-signal-safe calls: write(2) and backtrace_symbols_fd (backtrace() was primed at install).
  const char* head = "kernelopt: crashed (";
  const char* name = strsignal(sig);
  const char* tail = "); this is a bug, please report it with the backtrace below\n";
  (void)!write(STDERR_FILENO, head, strlen(head));
  (void)!write(STDERR_FILENO, name, strlen(name));
  (void)!write(STDERR_FILENO, tail, strlen(tail));
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);  // die by the same signal: the exit status a caller sees is unchanged
  raise(sig);
}

}  // namespace

void install_crash_handler() {
  void* prime[1];
  backtrace(prime, 1);  // loads the unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, on_crash);
}

}  // namespace kopt::util
