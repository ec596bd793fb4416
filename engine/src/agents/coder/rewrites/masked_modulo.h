// The "masked modulo" rewrite. A split reduction over a numel its chunks do not divide (a loss or a
// full sum over 128709891 elements in 528 chunks of 243769) reads `tl.load(ptr + ((r0_1 + 243769*x0)
// % 128709891), r0_mask & tmp2 & xmask)` with `tmp2 = tmp0 < 128709891`, `tmp0 = r0_1 + 243769*x0`:
// the modulo keeps the last chunk's overshooting lanes inside the tensor, but those lanes are masked
// by tmp2 and a masked lane's address is never read. Every lane the mask lets through has its index
// below the modulus already, so `(E) % C` is E there: the rewrite drops the modulo (an integer
// division per element and load) where the load's mask has a term that is exactly `E < C`.
#pragma once

#include <optional>
#include <string>

namespace kopt::agents::rewrites {

// The source with every such modulo dropped and how many; nothing, with the reason in `why`, when no
// load's index is a modulo its mask bounds.
struct MaskedModulo {
  std::string source;
  int dropped = 0;
};
std::optional<MaskedModulo> masked_modulo(const std::string& source, const std::string& name, std::string* why);

}  // namespace kopt::agents::rewrites
