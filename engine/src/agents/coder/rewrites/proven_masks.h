// The "proven masks" rewrite of a pointwise kernel. Inductor guards every window tap of a pool with
// bounds checks (`tmp5 = (3 + x0).to(tl.int32)`, `tmp5 >= 0`, `tmp5 < 1003`, and-ed into the load's
// mask) even where the pool has no padding and every tap of every output lies inside the input: a
// 1-D max pool of six taps then spends some 25 integer instructions per output on checks that are
// always true, and its masks, differing per element, keep Triton from treating the tap loads as
// whole vectors. The rewrite bounds every integer the kernel computes from its x index by interval
// arithmetic over [0, xnumel) (digits by % and //, sums, products and casts) and drops from each
// load's mask the terms proven true for every element; the mask keeps `xmask`, so lanes past
// xnumel stay masked. A term it cannot bound stays as it is: the rewrite never guesses.
#pragma once

#include <optional>
#include <string>

namespace kopt::agents::rewrites {

// The source with every load mask's provably-true terms removed, and how many terms went; nothing,
// with the reason in `why`, when the kernel is not Inductor's static 1-D pointwise form or no load
// mask has a term proven true.
struct ProvenMasks {
  std::string source;
  int dropped = 0;  // mask terms removed
  int loads = 0;    // loads whose mask changed
};
std::optional<ProvenMasks> proven_masks(const std::string& source, const std::string& name, std::string* why);

}  // namespace kopt::agents::rewrites
