// Capturing a problem into a bundle: torch.compile must run inside PyTorch, so the engine hands this to
// the worker's capture module (kernelopt.worker.capture), which owns the exit code and its one-line errors.
#pragma once

#include <string>
#include <vector>

namespace kopt::pipeline {

struct CaptureOptions {
  std::string problem, out, dtype, mode = "default", device = "cuda";
  std::string cpu_kernels = "cpp";  // --device cpu: Inductor's C++ kernels, or "triton" (run by the interpreter)
  std::string gpu;  // CUDA_VISIBLE_DEVICES for the capture process; empty: inherited
  int seed = 0;
  int timeout_s = 0;  // capture_and_wait: stop the capture (its whole process group) after this; 0: no limit
  bool force = false;
  bool json = false, quiet = false;  // meta.json's object on stdout / no summary line (`kernelopt capture`)
  bool autotune_cache = true;  // false: --no-autotune-cache (the module's loader times launch configs itself)
};

// The capture a job or a bench makes of a problem file on `device`: on the CPU, Inductor's Triton kernels for
// CPU tensors (what the interpreter runs and the optimizer works on), never its C++ kernels.
inline void set_job_device(CaptureOptions& o, const std::string& device) {
  o.device = device;
  o.cpu_kernels = device == "cpu" ? "triton" : "cpp";
}

// A job given a pool of workers (`kernelopt bench`) captures its problem file in the pool's worker (the
// `capture` request) instead of a process of its own (docs/bench.md): 1-10 s against 17-24 s on the H100
// (benchmarks/RESULTS.md, session 30). KERNELOPT_CAPTURE_IN_WORKER=0 turns it off.
bool capture_in_worker();

// The capture's command line (`kernelopt capture` runs it in place of itself).
std::vector<std::string> capture_argv(const CaptureOptions& o);
// Runs it as a child and returns its exit code. With `error_line`, the child's output goes to
// this process's stderr (stdout stays free) and its last "error:" line is kept there for the caller
// to report: a failed capture's error line is not echoed, so that it is printed once.
int capture_and_wait(const CaptureOptions& o, std::string* error_line = nullptr);
// A Triton or Helion kernel file (no top-level Model, and imports triton or helion, as
// worker/capture/kernel_files.py's input_kind decides, docs/inputs.md): captured by running its own
// kernels, which the interpreter can do in CPU mode.
bool is_kernel_file(const std::string& path);

}  // namespace kopt::pipeline
