// Epilogue fusion: a pointwise consumer that reads the internal buffer through a permutation of its
// index (a flip, a transpose: `out[x] = f(buf[1023 - x0 + 1024*x1])`) folds into the producer's
// store. The producer computes what it computed, then stores f of it straight into the consumer's
// output at the inverted index; the buffer is never written. Nothing else of the producer changes,
// so any producer (a scan, a reduction, a pointwise kernel) qualifies as long as it writes the
// buffer with one store and never reads it back.
#pragma once

#include <optional>
#include <string>

#include "agents/coder/fusion/pair.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The fused region's edit, or nothing with the reason in *why.
std::optional<stitch::RegionEdit> epilogue(const Pair& p, std::string* why);

}  // namespace kopt::agents::fusion
