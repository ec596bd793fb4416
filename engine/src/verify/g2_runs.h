// G2's input sets, shared by the kernel cascade (cascade.cpp) and the region cascade
// (region_cascade.cpp): which inputs, which poison fill, which runs repeat (docs/gates.md, "G2").
#pragma once

#include <string_view>
#include <vector>

namespace kopt::verify {

// One G2 input set: the recorded arguments (seed -1) or a seed drawn as `inputs` says, and the poison fill
// of its pure outputs.
struct G2Run {
  int seed;
  const char* fill;
  bool repeat = false;            // run the candidate twice on the same inputs
  const char* inputs = "matched";  // how a seed's values are drawn (docs/gates.md)
  bool small = false;              // the candidate under small_config() instead of its own config
};

// NaN on the recorded inputs and odd runs, finite garbage on even runs: NaN shows unwritten elements,
// garbage catches a candidate that skips outputs that do not look poisoned
// (the worker's poison.py). With no seeds, the recorded inputs also run with garbage.
// The seeds cover the kernel's domain, not only the recorded distribution: the second draws signs and
// magnitudes over four decades, the third mixes +-0, tiny and huge values and the recorded edges, the
// fourth is the second negated (every element negative once: a result right only for positive inputs
// fails); the first and the fifth on are distribution-matched. So the default five seeds cover every kind.
// With `small`, the recorded inputs run once more with the candidate under the small config (several
// programs per axis, several passes of every loop), right after the first run: one more run per launch.
std::vector<G2Run> g2_runs(int seeds, bool small);

// The recorded inputs or a distribution-matched seed: outputs with a meaningful scale, which G2 holds an
// elementwise match to (rules.h, beyond_scale); the symmetric, mirrored and special draws may give rounding noise.
inline bool ordinary_inputs(const G2Run& r) { return r.seed < 0 || std::string_view(r.inputs) == "matched"; }

}  // namespace kopt::verify
