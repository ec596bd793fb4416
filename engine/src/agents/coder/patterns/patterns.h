// Generators keyed by access pattern: each reads the kernel itself (its index expressions, masks,
// loops and numels, through the artifact IR) and decides whether it applies, whatever aten ops
// Inductor's comments name. The family templates (templates/) stay where they are best; these
// cover what a template keyed to an op name or a suite's shapes does not recognize. Like a
// template, a generator only proposes: every instance must pass every gate.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace kopt::agents::patterns {

// The names of every generator in the table (patterns.cpp), in the order they are tried.
std::vector<std::string> names();

// Instances of generator `name` for `k`, or none with the reason in *why_not (the pattern it looked
// for and what in the kernel did not match).
std::vector<Candidate> instantiate(const std::string& name, const KernelProfile& k, std::string* why_not);

}  // namespace kopt::agents::patterns
