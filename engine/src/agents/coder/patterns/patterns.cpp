#include "agents/coder/patterns/patterns.h"

#include "agents/coder/patterns/axis_reduction.h"
#include "agents/coder/patterns/window.h"

namespace kopt::agents::patterns {

namespace {

// The generator table, registered once: a name ("pattern:<name>" is the strategy) and how it
// instantiates. Each entry declines by itself when the kernel's access pattern is not its own.
struct Generator {
  const char* name;
  std::vector<Candidate> (*instantiate)(const KernelProfile& k, std::string* why_not);
};

const Generator kGenerators[] = {
    {"axis_reduction", axis_reduction},
    {"window", window},
};

}  // namespace

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const Generator& g : kGenerators)
    if (g.instantiate) out.push_back(g.name);
  return out;
}

std::vector<Candidate> instantiate(const std::string& name, const KernelProfile& k, std::string* why_not) {
  for (const Generator& g : kGenerators)
    if (g.instantiate && name == g.name) return g.instantiate(k, why_not);
  if (why_not) *why_not = "no access-pattern generator named " + name;
  return {};
}

}  // namespace kopt::agents::patterns
