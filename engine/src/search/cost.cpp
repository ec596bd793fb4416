#include "search/cost.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kopt::search {

double launch_elements(const ir::Launch& l) {
  double n = 1;
  bool any = false;
  for (const auto& [param, text] : l.bound) {
    if (param.size() < 5 || param.compare(param.size() - 5, 5, "numel") != 0) continue;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') continue;  // symbolic: not known before the run
    n *= std::max(1.0, v);
    any = true;
  }
  return any ? n : 0;
}

double kernel_elements(const ir::Artifact& a, const ir::Kernel& k) {
  const ir::Function* f = a.entry_function();
  if (!f) return 0;
  double n = 0;
  for (const ir::Launch& l : f->launches)
    if (&a.kernels.at(l.kernel) == &k) n += launch_elements(l);
  return n;
}

double model_elements(const ir::Bundle& b) {
  double n = 0;
  for (const auto& g : b.graphs)
    for (const ir::Kernel& k : g->kernels) n += kernel_elements(*g, k);
  return n;
}

double cascade_kernel_runs(int seeds) {
  // The recorded inputs: the worker's first recording of the kernel's launches, the original, the candidate
  // twice and the comparisons; then the small config and each seed: original, candidate, comparison.
  return 6 + 3.0 * (1 + std::max(0, seeds));
}

double cascade_seconds(const CostInputs& c, double kernel_elements, std::optional<double> earlier_s,
                       double kernel_bytes, double kernel_run_ms, int g4_reps) {
  double model_s = c.model_run_s > 0 ? c.model_run_s : (c.gpu ? 0 : c.model_elements * kInterpreterSecondsPerElement);
  // The kernel's share of a model run; all of it when the sizes are not literal.
  double share = c.model_elements > 0 && kernel_elements > 0 ? std::min(1.0, kernel_elements / c.model_elements) : 1.0;
  // On a GPU the runs take milliseconds; a compile of the candidate (one to a few seconds) dominates.
  double s = c.gpu ? 2.0 + 2 * model_s + kGpuCascadeSecondsPerByte * kernel_bytes
                   : cascade_kernel_runs(c.seeds) * share * model_s + 2 * model_s;
  // The kernel's own runs, where they are long: G2's (as counted for the interpreter) and G4's repetitions of the
  // original and the candidate (the candidate counted at the original's time: not known before its run).
  if (c.gpu && kernel_run_ms > 0) s += (cascade_kernel_runs(c.seeds) + 2.0 * std::max(0, g4_reps)) * kernel_run_ms / 1e3;
  return std::max(s, earlier_s.value_or(0));
}

double end_to_end_seconds(const CostInputs& c) {
  double model_s = c.model_run_s > 0 ? c.model_run_s : (c.gpu ? 0 : c.model_elements * kInterpreterSecondsPerElement);
  return c.gpu ? 1.0 + (kEndToEndModelRuns + 2.0 * timing_reps(c.reps, model_s * 1e3)) * model_s
               : kEndToEndModelRuns * model_s;
}

int screen_reps(int configured, double launch_ms) {
  if (launch_ms <= 100) return configured;
  return std::clamp(static_cast<int>(1000.0 / launch_ms), 3, std::max(3, configured));
}

int timing_reps(int configured, double launch_ms) {
  if (launch_ms <= 100) return configured;
  return std::min(configured, std::max(10, static_cast<int>(2000.0 / launch_ms)));
}

double screen_launch_seconds(int reps, double launch_ms) {
  return (reps + kScreenExtraLaunches) * std::max(0.0, launch_ms) / 1000.0;
}

size_t screen_batch_size(double left_s, double launch_ms, int reps, std::optional<double> per_candidate_s,
                         size_t most) {
  double launches_s = screen_launch_seconds(reps, launch_ms);
  // A candidate is counted at no less than the baseline's own launches: a batch's mean is no bound for the
  // next (a 192 ms split scan's first batch, six fast templates beside five configs at the baseline's speed,
  // measured 0.94 s a candidate; its second batch, three configs of five, took 1.4 s each, ended 0.3 s into
  // the time kept for the cascade of a 23x-faster template, and that cascade did not run: H100, session 34).
  double each = std::max(per_candidate_s.value_or(launches_s), launches_s);
  // Compile-bound (a full batch's launches take less than its compile wave): the size changes little.
  if (each * static_cast<double>(most) <= kScreenCompileSeconds) return most;
  double n = std::floor((left_s - launches_s - kScreenCompileSeconds) / each);
  // None once a batch has measured what a candidate costs and not one more ends in time: a batch of one
  // that ended past the time kept for the cascade left a 23x-faster candidate without its cascade
  // (session 33, 15 s left for 17 s).
  if (n < 1 && per_candidate_s) return 0;
  return static_cast<size_t>(std::clamp(n, 1.0, static_cast<double>(most)));
}

std::string seconds_text(double s) {
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 600) return fmt::format("{:.0f} s", s);
  return fmt::format("{:.0f} min", s / 60);
}

}  // namespace kopt::search
