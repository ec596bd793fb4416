// Access patterns of a kernel that its roofline floor does not see. The floor counts each byte a
// kernel must move once; a kernel that gathers through indices it loads at run time (an embedding
// lookup, Inductor's indirect indexing) reaches that only while the gathered table stays in L2, and
// the report says so where such a kernel stays far above its floor.
#pragma once

#include "artifact/ir.h"

namespace kopt::profile {

// Whether some tl.load's pointer depends on a value the kernel itself loaded (through any chain of
// assignments in its body).
bool gathers(const ir::Kernel& k);

}  // namespace kopt::profile
