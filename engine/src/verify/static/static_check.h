// G1, the static gate: what every check sees and what it answers.
//
// A candidate kernel source is untrusted (an LLM may have written it). G1 decides,
// without running anything, whether it may run in a worker at all. Each check is a
// free function in its own file (like Halide's pass-per-file src/); g1.cpp holds
// the list. Checks never throw for bad candidates: a rejection is a Finding.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "artifact/ir.h"
#include "artifact/pyparse/ast.h"

namespace kopt::verify {

struct StaticInput {
  const ir::Kernel& original;
  const std::string& candidate_source;
  ir::KernelSource original_parsed;        // the original kernel's source, parsed
  ir::KernelSource candidate;              // module is null when the candidate does not parse
  std::optional<py::ParseError> parse_error;  // set when the candidate does not parse
};

struct Finding {
  std::string check;    // "parses", "entry", ... (tests/error/*.py name it in `# expect: G1 <check>`)
  bool passed = false;
  std::string message;  // what was found, at candidate line:col, and what is allowed; one line per problem
};

using StaticCheck = Finding (*)(const StaticInput&);

// One per file, in the order g1.cpp runs them.
Finding check_parses(const StaticInput& in);      // check_parses.cpp
Finding check_entry(const StaticInput& in);       // check_entry.cpp
Finding check_signature(const StaticInput& in);   // check_signature.cpp
Finding check_decorators(const StaticInput& in);  // check_decorators.cpp
Finding check_imports(const StaticInput& in);     // check_imports.cpp
Finding check_host_code(const StaticInput& in);   // check_host_code.cpp
Finding check_stores(const StaticInput& in);      // check_stores.cpp

}  // namespace kopt::verify
