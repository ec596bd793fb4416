// The built-in coder's fusion strategies, tried on every region (profile/regions.h) with an
// internal buffer: for each buffer written by one launch and read by exactly one other, and by no
// other launch, each strategy (epilogue.h; its table in fusion.cpp) either builds the fused
// region's edit or says why not. Like every other generator, a strategy only proposes: the region
// cascade (verify/region_cascade.h) decides.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "profile/regions.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

struct RegionCandidate {
  std::string id;           // r1, r2, ... within a region
  std::string origin;       // "fusion:epilogue", ...
  std::string description;  // one line: "fold triton_poi_fused_flip_1 into triton_per_fused_cumsum_flip_0's store"
  stitch::RegionEdit edit;
};

// What the fusion strategies made of one region: its candidates, and each decline with its reason
// ("epilogue: triton_poi_fused_flip_1 ...").
struct RegionPlan {
  std::vector<std::string> kernels;  // the region's kernels, in call order
  std::vector<RegionCandidate> candidates;
  std::vector<std::string> declined;
};

// `winners`: kernel name -> the per-kernel search's chosen source. Each strategy is tried on those
// sources first where a kernel of the pair has one (the fusion keeps what the kernel's own search
// won: a faster scan with the flip folded in), then on the kernels' own sources. `pins`: kernel name ->
// its baseline launch config (stitch::Pins); a kernel's own source is taken pinned to it, so the fused
// kernel runs the config the baseline ran instead of autotuning afresh in every process that loads it
// (a cumprod with the flip folded into its store settled elsewhere, summed its special values in
// another order and put NaNs where the baseline had none: G2 failed a correct fusion, an H100).
RegionPlan plan_region(const ir::Artifact& a, const ir::Function& f, const profile::Region& r,
                       const std::map<std::string, std::string>& winners = {},
                       const std::map<std::string, nlohmann::json>& pins = {});

}  // namespace kopt::agents::fusion
