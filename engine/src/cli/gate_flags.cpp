#include "cli/gate_flags.h"

namespace kopt::cli {

void add_gate_flags(CLI::App& sub, verify::CascadeOptions& gate, GateFlagSet set) {
  CLI::Option* seeds = sub.add_option("--seeds", gate.seeds, "G2: fresh random input sets besides the recorded one")
                           ->capture_default_str();
  if (set.nonnegative_seeds) seeds->check(CLI::NonNegativeNumber);
  sub.add_option("--gamma", gate.gamma, "G4 and E2E: required speedup factor")->capture_default_str();
  if (set.reps)
    sub.add_option("--reps", gate.reps, "G4 and E2E: timed repetitions")->capture_default_str()
        ->check(CLI::PositiveNumber);
  verify::Tolerances& t = gate.tol;
  sub.add_option("--atol-fp32", t.atol_fp32, "absolute tolerance for fp32/fp64 tensors")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--rtol-fp32", t.rtol_fp32, "relative tolerance for fp32/fp64 tensors")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--atol-half", t.atol_half, "absolute tolerance for fp16/bf16 tensors")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--rtol-half", t.rtol_half, "relative tolerance for fp16/bf16 tensors")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

CLI::Option* add_seconds_option(CLI::App& sub, const std::string& name, std::chrono::seconds& seconds,
                                const std::string& description) {
  auto set = [&seconds](int s) { seconds = std::chrono::seconds(s); };
  return sub.add_option_function<int>(name, set, description)->default_str(std::to_string(seconds.count()));
}

}  // namespace kopt::cli
