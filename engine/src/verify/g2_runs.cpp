#include "verify/g2_runs.h"

namespace kopt::verify {

std::vector<G2Run> g2_runs(int seeds, bool small) {
  static constexpr const char* kinds[] = {"matched", "symmetric", "special", "mirrored"};
  std::vector<G2Run> runs = {{-1, "nan", true}};
  if (small) runs.push_back({-1, "nan", false, "matched", true});
  for (int s = 0; s < seeds; ++s) {
    const char* kind = s < 4 ? kinds[s] : "matched";
    int seed = s == 3 ? 1 : s;  // the mirrored run negates the symmetric draw of seed 1
    runs.push_back({seed, s % 2 == 0 ? "garbage" : "nan", false, kind});
  }
  if (seeds <= 0) runs.push_back({-1, "garbage"});
  return runs;
}

}  // namespace kopt::verify
