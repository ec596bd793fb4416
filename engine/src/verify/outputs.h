// Which pointer parameters a kernel only writes (pure outputs): G2 poisons
// exactly those before each run, so an element the candidate never writes shows
// up as NaN instead of passing with a stale correct value. A pointer that is
// also read (in-place buffers) keeps its input values.
#pragma once

#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::verify {

// Indices into the launch's runtime arguments (non-constexpr parameters, in order).
std::vector<size_t> pure_output_args(const ir::Kernel& k);

// What the kernel's source writes, as indices like pure_output_args': `stored`, every pointer
// parameter it stores to (or updates atomically), read as well or not; `pure`, those it never
// loads. Inductor's mutated_arg_names can name an in_out pointer the kernel only reads (a buffer
// planned in place whose result went to another layout); the source says what is written.
struct PointerWrites {
  std::vector<size_t> stored, pure;
};
PointerWrites pointer_writes(const ir::Kernel& k);

// Scratch arguments (split scans' workspace): at every launch of `k` in `a`, a buffer the host
// function allocates, at most zeroes (`buf.zero_()`), passes to this launch alone at a parameter
// Inductor declares mutated, and frees, never reading it afterwards. What the kernel leaves in
// it is dead, so G2 does not compare it (a candidate may use the scratch space differently).
std::vector<size_t> scratch_args(const ir::Artifact& a, const ir::Kernel& k);

}  // namespace kopt::verify
