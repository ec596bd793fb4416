// Epilogue fusion: a pointwise consumer that reads the internal buffer through a permutation of its
// index (a flip, a transpose: `out[x] = f(buf[1023 - x0 + 1024*x1])`) folds into the producer's
// stores. The producer computes what it computed, then stores f of it straight into the consumer's
// output at the inverted index; the buffer is never written. Nothing else of the producer changes,
// so any producer (a scan, a reduction, a pointwise kernel, a per-kernel winner that stores in
// chunks) qualifies as long as it only stores to the buffer, through `tl.store(ptr + (index), ...)`.
// The consumer may be tiled over several program axes and load other buffers the producer is passed
// too (`out[t(x)] = buf[p(x)] - in[p(x)]`: an exclusive scan written in a transposed layout).
#pragma once

#include <optional>
#include <string>

#include "agents/coder/fusion/pair.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The fused region's edit, or nothing with the reason in *why.
std::optional<stitch::RegionEdit> epilogue(const Pair& p, std::string* why);

}  // namespace kopt::agents::fusion
