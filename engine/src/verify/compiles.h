// G1's last check, `compiles`: the candidate is compiled for the target by the
// worker (python/kernelopt/worker/runtime/compile_check.py) for the kernel's recorded
// launch. It needs Triton, so it is not in static/; it runs only after every
// static check passed, since loading the candidate executes its module code.
#pragma once

#include <string>

#include "artifact/ir.h"
#include "verify/cascade.h"
#include "verify/static/static_check.h"
#include "worker/supervisor.h"

namespace kopt::verify {

// Loads the bundle and records the baseline's launches in the worker (under o.load_timeout),
// then asks it to compile `source` for launch 0 of `k` (under o.timeout). A compiler error,
// a timeout or a crash is a failed finding naming it.
Finding check_compiles(worker::Supervisor& sup, const std::string& bundle, size_t graph, const ir::Kernel& k,
                       const std::string& source, const CascadeOptions& o);

}  // namespace kopt::verify
