#include "cli/gate_flags.h"

#include "cli/flags.h"

namespace kopt::cli {

void add_gate_flags(CLI::App& sub, verify::CascadeOptions& gate, GateFlagSet set) {
  // --seeds 0 is documented (docs/gates.md): the recorded inputs only, run again with garbage.
  add_number(sub, "--seeds", gate.seeds, "G2: fresh random input sets besides the recorded one", Least::zero);
  // Below 1 the gate would accept a candidate slower than the baseline.
  add_number(sub, "--gamma", gate.gamma, "G4 and E2E: required speedup factor", Least::one);
  if (set.reps) add_number(sub, "--reps", gate.reps, "G4 and E2E: timed repetitions", Least::one);
  verify::Tolerances& t = gate.tol;
  add_number(sub, "--atol-fp32", t.atol_fp32, "absolute tolerance for fp32/fp64 tensors", Least::zero);
  add_number(sub, "--rtol-fp32", t.rtol_fp32, "relative tolerance for fp32/fp64 tensors", Least::zero);
  add_number(sub, "--atol-half", t.atol_half, "absolute tolerance for fp16/bf16 tensors", Least::zero);
  add_number(sub, "--rtol-half", t.rtol_half, "relative tolerance for fp16/bf16 tensors", Least::zero);
}

CLI::Option* add_seconds_option(CLI::App& sub, const std::string& name, std::chrono::seconds& seconds,
                                const std::string& description) {
  auto set = [&seconds](int s) { seconds = std::chrono::seconds(s); };
  const std::string shown = std::to_string(seconds.count());
  return sub.add_option_function<int>(name, set, description)
      ->default_str(shown)
      ->check(number(name, Least::one, true, shown));
}

}  // namespace kopt::cli
