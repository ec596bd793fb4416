// The family of a kernel (softmax, layer_norm, pooling, scan, ...), recognized
// from the ATen ops Inductor lists above it and its heuristic kind. The planner
// chooses strategies per family; the report groups results by it.
#pragma once

#include <string>

#include "artifact/ir.h"

namespace kopt::profile {

std::string family(const ir::Kernel& k);

}  // namespace kopt::profile
