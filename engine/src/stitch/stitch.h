// Re-stitching: the module with some kernels' sources replaced and every other
// byte unchanged. The launch sites stay as they are, which is why a replacement
// must keep the kernel's name (and, at G1, its parameter list).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/ir.h"
#include "stitch/region.h"

namespace kopt::stitch {

struct Replacement {
  std::string kernel;  // kernel name or module variable
  std::string source;  // the new kernel source (what goes inside async_compile.triton's string)
  std::string origin;  // where it came from, for error messages
};

// Kernel name -> the launch config Inductor's autotuner settled on for it in the baseline (the
// worker's launch records). A stitched module runs every kernel it keeps under that config: loaded
// afresh, its kernels would autotune again and could settle on other configs, whose reductions
// round differently, so a gate would see changes the candidate did not make, and the module
// delivered would run configs no gate verified.
using Pins = std::map<std::string, nlohmann::json>;

// Pins from the worker's launch records (`record_launches`: [{"name", ..., "config"?}, ...]).
Pins pins_of(const nlohmann::json& launch_records);

// Returns the new module text. Throws kopt::UserError when a replacement names
// no kernel of the module, is named twice, or is not exactly one kernel of the
// same name. With `pins` and at least one replacement or region, the kept kernels are pinned
// (nothing replaced: the module's own text, byte for byte). Each region's launches are replaced by
// its fused kernel's (region.h); a kernel a region fuses may still be replaced where it is launched
// outside the region.
std::string stitch(const ir::Artifact& art, const std::vector<Replacement>& reps, const Pins& pins = {},
                   const std::vector<RegionEdit>& regions = {});

// The Python string literal Inductor would write for `source` ('''...''').
std::string triple_quoted(const std::string& source);

}  // namespace kopt::stitch
