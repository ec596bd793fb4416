// Access patterns of a kernel that its roofline floor does not see. The floor counts each byte a
// kernel must move once; a kernel that gathers through indices it loads at run time (an embedding
// lookup, Inductor's indirect indexing) reaches that only while the gathered table stays in L2, and
// the report says so where such a kernel stays far above its floor.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"

namespace kopt::profile {

// How many elements of pointer argument `arg` (index among the launch's runtime arguments) the
// kernel's loads (or, with `stores`, its stores) can touch, from their index expressions: each
// address `ptr + affine(digits of xindex / yindex / zindex / r0_index)` split into a row of the
// argument's tensor (the multiples of its row stride, the smallest stride above 1) and a column (the
// rest), columns of accesses to the same rows merged into intervals, masks ignored. A kernel that
// reads the q and k thirds of a fused projection's 16384 x 12288 output touches 8256 of its 12288
// columns, where the whole storage counted a floor above the kernel's own time. nullopt when some
// access is not such an address (a gather, a division in the index): the caller counts the storage.
std::optional<uint64_t> touched_elements(const ir::Kernel& k, size_t arg, const nlohmann::json& launch, bool stores);
// The same on `k`'s source parsed once by the caller (a floor asks for every argument of one kernel).
std::optional<uint64_t> touched_elements(const ir::Kernel& k, const ir::KernelSource& parsed, size_t arg,
                                         const nlohmann::json& launch, bool stores);

// Whether some tl.load's pointer depends on a value the kernel itself loaded (through any chain of
// assignments in its body).
bool gathers(const ir::Kernel& k);

}  // namespace kopt::profile
