// G1, the static gate: every check of engine/src/verify/static/ on a candidate kernel
// source, in order, without running anything (docs/gates.md, "G1 static").
#pragma once

#include <string>
#include <vector>

#include "artifact/ir.h"
#include "verify/static/static_check.h"

namespace kopt::verify {

struct NamedCheck {
  const char* name;
  StaticCheck run;
};

// The checks in the order G1 runs them.
const std::vector<NamedCheck>& g1_checks();

struct G1Result {
  bool passed = false;            // every finding passed
  std::vector<Finding> findings;  // one per check run: all of them, or just `parses` when it failed
};

// Runs G1 on `candidate_source` as a replacement for `original`. Never throws for a bad
// candidate: a candidate that does not parse gives one failed `parses` finding.
G1Result run_g1(const ir::Kernel& original, const std::string& candidate_source);

}  // namespace kopt::verify
