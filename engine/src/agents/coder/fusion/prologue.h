// Prologue fusion: a pointwise producer `buf[i] = f(in[g(i)])` inlined into its only consumer's
// load of the buffer. The consumer (any kind: a reduction, a scan, a pointwise kernel) keeps its
// work; its one load of the buffer becomes: the producer's digits computed from the consumer's
// index, the producer's load of its input at g of them (under the consumer's mask), f, and the
// conversion to the buffer's type the round trip did. The consumer's parameter for the buffer is
// bound to the producer's input instead (its declared type changed to the input's), so the
// producer must read exactly one buffer.
#pragma once

#include <optional>
#include <string>

#include "agents/coder/fusion/pair.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The fused region's edit, or nothing with the reason in *why.
std::optional<stitch::RegionEdit> prologue(const Pair& p, std::string* why);

}  // namespace kopt::agents::fusion
