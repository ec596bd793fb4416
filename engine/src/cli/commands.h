// One function per subcommand; main.cpp only wires them into CLI11.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "worker/supervisor.h"

namespace kopt::cli {

struct InspectOptions {
  std::string target;  // bundle directory or module file
  bool json = false;
};
int inspect(const InspectOptions& o);

struct StitchOptions {
  std::string module;
  std::vector<std::string> replace;  // NAME=KERNEL.py
  std::string output;                // empty: stdout
};
int stitch(const StitchOptions& o);

struct CaptureOptions {
  std::string problem, out, mode, device, dtype;
  int seed = 0;
  bool force = false;
};
int capture(const CaptureOptions& o);

struct ParseOptions {
  std::string file;
  bool dump = false, print = false;
};
int parse(const ParseOptions& o);

struct ProfileOptions {
  std::string bundle, device = "cuda", gpu = "0", db;
  int reps = 20, timeout_s = 600;
  bool json = false, quiet = false;
};
int profile(const ProfileOptions& o);

struct VerifyOptions {
  std::string bundle, kernel, candidate, device = "cuda", gpu = "0", db;
  int seeds = 5, timeout_s = 600;
  double gamma = 1.03;
  bool json = false, quiet = false;
};
int verify(const VerifyOptions& o);

// The Python interpreter that runs the worker: $KERNELOPT_PYTHON or python3.
std::string python_executable();

// One worker for `device` ("cuda" on GPU `gpu`, or "cpu"); start-up failures are UserErrors.
std::unique_ptr<worker::Supervisor> start_worker(const std::string& device, const std::string& gpu);

}  // namespace kopt::cli
