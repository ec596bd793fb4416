// Regions of the host function: the unit beyond one kernel. A region is a maximal run of Triton
// launches in call() between vendor calls (and any other statement that computes: an aten
// fallback, a graph partition, a copy), with the buffers each launch reads and writes. A buffer a
// region writes that nothing after the region reads, that is not returned and is not an input of
// call(), is internal: its bytes round-trip through memory only because the work is split over
// kernels. A region's floor counts its inputs read once and its outputs written once — what one
// fused kernel must move at least — against the sum of its kernels' floors, which count every
// internal buffer twice (written by one kernel, read by the next).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/bundle.h"
#include "artifact/ir.h"
#include "verify/region_host.h"

namespace kopt::profile {

struct RegionBuffer {
  std::string name;    // the storage: a call() input or an allocated buffer (views and aliases resolved)
  uint64_t bytes = 0;  // what it spans (0 when its size is not known)
};

struct Region {
  std::vector<size_t> launches;  // indices into the function's launches, in call order
  std::vector<RegionBuffer> inputs;    // read before the region writes them (or never written in it)
  std::vector<RegionBuffer> outputs;   // written, and read after the region, returned, or a call() input
  std::vector<RegionBuffer> internal;  // written, and read only inside the region
  uint64_t floor_bytes() const;        // inputs + outputs
  uint64_t internal_bytes() const;
};

// The regions of `f`, in call order, each with at least one launch. `graph_args` is meta.json's
// graphs[g].args (shape, stride and dtype of call()'s inputs by position): with it the inputs' bytes
// are known; allocated buffers' bytes come from their allocation in `f`.
std::vector<Region> regions(const ir::Artifact& a, const ir::Function& f, const nlohmann::json& graph_args);

// fn(graph, its artifact, its entry function, its regions) for each graph of `bundle` that has an entry
// function, the regions read with the graph's recorded arguments (meta.json `graphs[g].args`).
template <class Fn>
void each_graph_regions(const ir::Bundle& bundle, Fn&& fn) {
  const nlohmann::json graphs = bundle.meta.value("graphs", nlohmann::json::array());
  for (size_t g = 0; g < bundle.graphs.size(); ++g) {
    const ir::Artifact& a = *bundle.graphs[g];
    const ir::Function* f = a.entry_function();
    if (!f) continue;
    nlohmann::json args =
        g < graphs.size() && graphs[g].is_object() ? graphs[g].value("args", nlohmann::json()) : nlohmann::json();
    fn(g, a, f, regions(a, *f, args));
  }
}

// The buffers' storage names, in order.
std::vector<std::string> names(const std::vector<RegionBuffer>& buffers);

// The region as the region cascade takes it (verify/region_host.h): its launches and its buffers' names.
verify::RegionFacts facts(const Region& r);

// The regions as report.json writes them: kernels by name, buffers with their bytes, both floors' bytes.
nlohmann::json to_json(const ir::Artifact& a, const ir::Function& f, const std::vector<Region>& rs);

}  // namespace kopt::profile
