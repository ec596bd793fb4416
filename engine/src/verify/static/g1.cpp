#include "verify/static/g1.h"

#include "util/error.h"

namespace kopt::verify {

const std::vector<NamedCheck>& g1_checks() {
  static const std::vector<NamedCheck> kChecks = {
      {"parses", check_parses},        // nothing else can be checked on a source that does not parse
      {"entry", check_entry},          // the function the launch site calls, and nothing else defined
      {"signature", check_signature},  // the launch site stays unchanged
      {"decorators", check_decorators},
      {"imports", check_imports},
      {"host_code", check_host_code},
      {"stores", check_stores},        // writes only where the original writes
  };
  return kChecks;
}

G1Result run_g1(const ir::Kernel& original, const std::string& candidate_source) {
  // The original came out of the IR builder, so it parses; failing here is our bug.
  ir::KernelSource orig = ir::parse_kernel_source(original.source, original.name, "original " + original.name);
  KOPT_INTERNAL_ASSERT(orig.entry != nullptr, "original kernel " + original.name + " has no entry");
  StaticInput in{original, candidate_source, std::move(orig), {}, std::nullopt};
  try {
    in.candidate.module = py::parse(candidate_source, "candidate");
  } catch (const py::ParseError& e) {
    in.parse_error = e;
  }
  if (in.candidate.module) in.candidate = ir::parse_kernel_source(candidate_source, original.entry, "candidate");

  G1Result result;
  result.passed = true;
  for (const NamedCheck& c : g1_checks()) {
    result.findings.push_back(c.run(in));
    result.passed = result.passed && result.findings.back().passed;
    if (in.parse_error) break;
  }
  return result;
}

}  // namespace kopt::verify
