// The region search: beside the per-kernel search, every region of call() (profile/regions.h)
// with an internal buffer gets the coder's region candidates (agents/coder/fusion/, and the LLM's),
// each through the region cascade (verify/region_cascade.h): in CPU mode until one is accepted, on a
// GPU every one the budget allows, the accepted one saving most taken. An accepted region
// replaces the per-kernel winners of its kernels only when it saves more: on a GPU, its G4 model
// time saved against the sum of what those winners save; in CPU mode (nothing timed) for its floor,
// since a fused region moves its internal buffers zero times instead of twice. Any later failure
// (the end-to-end gate) gives the kernels their per-kernel results back (drop_region).
#pragma once

#include <algorithm>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/coder/fusion/fusion.h"
#include "search/search.h"
#include "verify/region_cascade.h"

namespace kopt::search {

struct RegionTried {
  agents::fusion::RegionCandidate candidate;
  verify::RegionCascadeResult result;
  bool cached = false;  // the result came from the results database
  // GPU: the model's speed with the candidate over the model's as it is, in the candidate's screen (a few runs).
  std::optional<double> screen_ratio;
  // Stopped after its screen (G1 passed, not faster): its cascade holds G1 alone.
  bool screened_out() const {
    return !result.cascade.accepted && result.cascade.gates.size() == 1 && result.cascade.gates[0].gate == "G1" &&
           result.cascade.gates[0].status == verify::GateStatus::passed;
  }
};

struct RegionOutcome {
  size_t graph = 0, index = 0;  // the region: its graph, its place among the graph's regions
  verify::RegionFacts facts;
  agents::fusion::RegionPlan plan;
  std::vector<RegionTried> tried;
  std::optional<size_t> chosen;  // into tried: the region's fused kernel is in the result
  std::string note;              // why chosen or not, or why nothing was tried
  // The per-kernel winners the chosen region replaced, to give back (outcome index, chosen, speedup).
  struct Saved {
    size_t outcome;
    std::optional<size_t> chosen;
    std::optional<double> speedup;
  };
  std::vector<Saved> replaced;
};

// Every region of every graph with at least two launches, fusion tried where the coder (its
// propose_region: the built-in strategies, the LLM's fused kernels, or both) has a candidate;
// `outcomes` (the per-kernel search's) lose the winners a chosen region replaces.
// Region cascades are cached in the results database (kind "region_cascade") under the module, the
// region's kernels' launch records and the candidate module's hash, with `o.cache_prefix`.
std::vector<RegionOutcome> search_regions(worker::Supervisor& sup, const ir::Bundle& bundle, agents::Coder& coder,
                                          std::vector<KernelOutcome>& outcomes, const SearchOptions& o, Cache& cache,
                                          const Progress& progress);

// Seconds the region search will want for the built-in coder's region candidates (a fusion, a segment
// split) of the bundle: for each region that has one, the estimate of one region cascade (its kernels'
// cascade estimates summed, with the bytes `profiles` say each moves, as the search checks before each) and,
// on a GPU, each candidate's screen (region_screen_seconds). 0 when no region has a candidate.
double region_reserve_seconds(const ir::Bundle& bundle, const std::vector<agents::KernelProfile>& profiles,
                              const SearchOptions& o);

// A region candidate's screen on a GPU (verify::screen_region): a compile and load of the module, then five
// model runs of the baseline and five of the candidate. 0 in CPU mode (no screens).
double region_screen_seconds(const SearchOptions& o);

// What the per-kernel search keeps back of the `left_s` it has for a region search wanting `wanted_s`: all of
// it, up to half (a split is the one candidate that helps a softmax over few long rows; with a third kept, a
// 26.8 ms softmax over 1873 rows of 1.2M bf16 elements kept 19 s for its split's 20 s cascade, which then did
// not run: H100, session 34).
inline double region_share_seconds(double wanted_s, double left_s) {
  return wanted_s <= 0 || left_s <= 0 ? 0.0 : std::min(wanted_s, left_s / 2);
}

// Takes the region out of the result: its kernels get their per-kernel winners back; `why` is the note.
void drop_region(RegionOutcome& r, std::vector<KernelOutcome>& outcomes, const std::string& why);

// The region edits of the chosen regions of graph `graph`, for the stitcher.
std::vector<stitch::RegionEdit> chosen_edits(const std::vector<RegionOutcome>& rs, size_t graph);

// report.json's `fusion` of a region (docs/report.md).
nlohmann::json region_json(const RegionOutcome& r);

}  // namespace kopt::search
