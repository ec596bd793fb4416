// Pieces of the IR builder shared between its files (not part of the IR's API).
#pragma once

#include <map>
#include <string>

#include "artifact/ir.h"

namespace kopt::ir {

// Comments and blank lines directly above a node (the trivia of its first token).
std::string_view leading_trivia(const py::Module& m, const py::Node* n);

// `var = async_compile.triton('name', '''src''', ...)` -> Kernel (launch_count left 0).
Kernel read_kernel_decl(const py::Module& m, const py::Node* assign, const py::Node* call);

// Reads one host function (`def call(args)`, `Runner.call`, `partition_N`).
// `kernel_by_var` maps module variables to kernel indices so launches resolve.
Function read_host_function(const py::Module& m, const py::Node* def, std::string name,
                            const std::map<std::string, size_t, std::less<>>& kernel_by_var);

Arg read_arg(const py::Module& m, const py::Node* n);

}  // namespace kopt::ir
