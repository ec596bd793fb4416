// `kernelopt candidates BUNDLE --out DIR`: what the built-in coder proposes for every Triton kernel of a
// bundle, written to files and never run. The main job's own stages produce it (pipeline::plan_bundle, then
// search::propose), so two dumps that are byte-identical before and after a refactoring show that the
// refactoring left the candidates alone (tools/dump_candidates.py, docs/testing.md).
//
// DIR/<kernel>/<NNN>-<origin>.py holds each candidate's full source; DIR/manifest.json lists, per kernel in
// the search's order, its plan and each candidate's id, origin, description, launch config and hash (the
// one report.json gives it). Nothing in either depends on where the bundle or DIR lies, or on the clock.
// DIR/regions/g<G>-r<I>/<NNN>-<origin>.py holds each region candidate (a fusion, a segment split) as the
// whole module it stitches, planned on the kernels' own sources (the search plans on its winners too), and
// manifest.json's `regions` lists them. Regions need no recorded launches: `--regions` dumps only them and
// starts no worker, so a bundle of several GB dumps in seconds and its modules can be run by hand.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "agents/agent.h"
#include "artifact/bundle.h"
#include "cli/commands.h"
#include "agents/coder/fusion/fusion.h"
#include "pipeline/job.h"
#include "profile/regions.h"
#include "search/search.h"
#include "stitch/stitch.h"
#include "util/error.h"

namespace kopt::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw UserError(fmt::format("{}: cannot write; check --out", path.string()));
}

// Checked before a worker starts: a dump into a directory holding an older one would mix the two.
void prepare_out(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec))
    throw UserError(fmt::format("{}: exists and is not empty; give a new directory to --out", out.string()));
  fs::create_directories(out, ec);
  if (ec || access(out.c_str(), W_OK) != 0)
    throw UserError(fmt::format("{}: cannot create or write this directory; check --out", out.string()));
}

// "template:layer_norm" -> "template_layer_norm": a file name on every system.
std::string file_safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return s;
}

// Every region's candidates, each the module it stitches, under out/regions; their manifest entries.
json dump_regions(const ir::Bundle& bundle, const fs::path& out, bool quiet, size_t* total) {
  json regions = json::array();
  profile::each_graph_regions(bundle, [&](size_t g, const ir::Artifact& a, const ir::Function* f,
                                          const std::vector<profile::Region>& rs) {
    for (size_t i = 0; i < rs.size(); ++i) {
      agents::fusion::RegionPlan plan = agents::fusion::plan_region(a, *f, rs[i]);
      std::string dir = fmt::format("regions/g{}-r{}", g, i);
      json cands = json::array();
      for (size_t c = 0; c < plan.candidates.size(); ++c) {
        const agents::fusion::RegionCandidate& rc = plan.candidates[c];
        std::string file = fmt::format("{}/{:03}-{}.py", dir, c + 1, file_safe(rc.origin));
        fs::create_directories(out / dir);
        write_file(out / file, stitch::stitch(a, {}, {}, {rc.edit}));
        cands.push_back({{"index", c + 1}, {"id", rc.id}, {"origin", rc.origin}, {"description", rc.description},
                         {"kernel", rc.edit.kernel}, {"file", file}});
      }
      *total += cands.size();
      if (!quiet && !plan.candidates.empty())
        std::cerr << fmt::format("[kernelopt] region {} of graph {}: {} candidate(s)\n", i, g, cands.size());
      regions.push_back({{"graph", g}, {"region", i}, {"dir", dir}, {"kernels", plan.kernels},
                         {"declined", plan.declined}, {"candidates", cands}});
    }
  });
  return regions;
}

}  // namespace

int candidates(const CandidatesOptions& o) {
  if (o.device != "cuda" && o.device != "cpu") throw UserError("--device " + o.device + ": use cuda or cpu");
  if (!ir::is_bundle_dir(o.bundle))
    throw UserError(fmt::format("{}: not a bundle directory (no meta.json); pass a captured bundle", o.bundle));
  const fs::path out(o.out);
  prepare_out(out);
  size_t total = 0;
  if (o.regions_only) {
    std::unique_ptr<ir::Bundle> bundle = ir::load_bundle(o.bundle);
    json regions = dump_regions(*bundle, out, o.quiet, &total);
    write_file(out / "manifest.json", json{{"format", "kernelopt-candidates"}, {"device", o.device},
                                           {"kernels", json::array()}, {"regions", regions}}
                                              .dump(2) + "\n");
    if (!o.quiet) std::cerr << fmt::format("[kernelopt] {} region candidate(s) in {}\n", total, o.out);
    return 0;
  }

  // The built-in agents only: an LLM's proposals are not reproducible, so there is nothing to compare.
  agents::Agents agents = agents::make_agents("builtin");
  pipeline::OptimizeOptions oo;
  oo.target = o.bundle, oo.device = o.device, oo.gpus = o.gpu, oo.quiet = o.quiet;
  oo.gate.timeout = oo.gate.load_timeout = std::chrono::seconds(o.timeout_s);
  if (!o.quiet) std::cerr << fmt::format("[kernelopt] recording the launches of {} ({} worker)\n", o.bundle, o.device);
  pipeline::PlannedBundle planned = pipeline::plan_bundle(oo, agents);

  // A kernel's directory is its name, with the graph in front only where two graphs share that name.
  std::map<std::string, int> seen;
  for (const agents::KernelProfile& k : planned.ranked) ++seen[k.kernel->name];

  json kernels = json::array();
  for (const agents::KernelProfile& k : planned.ranked) {
    search::KernelOutcome proposed = search::propose(agents, k);
    std::string dir = seen[k.kernel->name] > 1 ? fmt::format("g{}-{}", k.graph, k.kernel->name) : k.kernel->name;
    json cands = json::array();
    for (size_t i = 0; i < proposed.candidates.size(); ++i) {
      const agents::Candidate& c = proposed.candidates[i].candidate;
      std::string file = fmt::format("{}/{:03}-{}.py", dir, i + 1, file_safe(c.origin));
      fs::create_directories(out / dir);
      write_file(out / file, c.source);
      cands.push_back({{"index", i + 1}, {"id", c.id}, {"origin", c.origin}, {"description", c.description},
                       {"config", c.config}, {"own_config_space", c.own_config_space}, {"file", file},
                       {"hash", proposed.candidates[i].hash}});
    }
    total += cands.size();
    kernels.push_back({{"kernel", k.kernel->name}, {"graph", k.graph}, {"dir", dir}, {"family", k.family},
                       {"launches", k.launches.size()}, {"strategies", proposed.plan.strategies},
                       {"declined", proposed.plan.declined}, {"note", proposed.note}, {"candidates", cands}});
    if (!o.quiet) std::cerr << fmt::format("[kernelopt] {}: {} candidate(s)\n", k.kernel->name, cands.size());
  }
  json regions = dump_regions(*planned.bundle, out, o.quiet, &total);
  write_file(out / "manifest.json", json{{"format", "kernelopt-candidates"}, {"device", o.device}, {"kernels", kernels},
                                         {"regions", regions}}
                                        .dump(2) + "\n");
  if (!o.quiet) std::cerr << fmt::format("[kernelopt] {} candidate(s) for {} kernel(s) in {}\n", total, kernels.size(), o.out);
  return 0;
}

}  // namespace kopt::cli
