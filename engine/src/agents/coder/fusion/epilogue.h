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
#include <utility>
#include <vector>

#include "agents/coder/fusion/pair.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

// The fused region's edit, or nothing with the reason in *why. Its stores are written over the producer's own
// names where the inverse's `%` and `//` simplify under the producer's index ranges, and flipped along r where
// the address then descends along it (Triton's axis analysis sees no contiguity through `%` and `//`, nor in a
// descending address: a reversed cumprod over a transposed bf16 tensor fused with its store so ran 0.83x its two
// unfused kernels, H100).
std::optional<stitch::RegionEdit> epilogue(const Pair& p, std::string* why);

// The same fold with its stores through the consumer's digits as the inverse gives them (`(1099 - (a % 1152))`):
// the form every fold had before, which stays a candidate after epilogue's (on a looped reversed cumprod that
// stores along r it ran at 1.16x its floor, 4.23x the pair: H100, session 33).
std::optional<stitch::RegionEdit> epilogue_digits(const Pair& p, std::string* why);

// epilogue's edit where it differs from `digits` (epilogue_digits' edit of the same pair), with what it is:
// the fusion strategy proposes it first, then the digits' form.
std::vector<std::pair<std::string, stitch::RegionEdit>> epilogue_variants(const Pair& p,
                                                                          const stitch::RegionEdit& digits);

}  // namespace kopt::agents::fusion
