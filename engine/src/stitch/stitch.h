// Re-stitching: the module with some kernels' sources replaced and every other
// byte unchanged. The launch sites stay as they are, which is why a replacement
// must keep the kernel's name (and, at G1, its parameter list).
#pragma once

#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::stitch {

struct Replacement {
  std::string kernel;  // kernel name or module variable
  std::string source;  // the new kernel source (what goes inside async_compile.triton's string)
  std::string origin;  // where it came from, for error messages
};

// Returns the new module text. Throws kopt::UserError when a replacement names
// no kernel of the module, is named twice, or is not exactly one kernel of the
// same name.
std::string stitch(const ir::Artifact& art, const std::vector<Replacement>& reps);

// The Python string literal Inductor would write for `source` ('''...''').
std::string triple_quoted(const std::string& source);

}  // namespace kopt::stitch
