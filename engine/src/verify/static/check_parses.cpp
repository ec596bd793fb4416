// Check 1, parses: the candidate must be valid Python (the engine's parser, which
// mirrors CPython's grammar). Nothing else can be checked on a source that does not
// parse, so G1 stops after this check fails.
#include <fmt/format.h>

#include "verify/static/static_check.h"

namespace kopt::verify {

Finding check_parses(const StaticInput& in) {
  if (in.parse_error) {
    const py::ParseError& e = *in.parse_error;
    return {"parses", false, fmt::format("line {}:{}: does not parse: {}", e.line, e.col + 1, e.message)};
  }
  return {"parses", true, "the candidate parses"};
}

}  // namespace kopt::verify
