// What the region tests share: a bundle's first region as the built-in coder plans it (its facts for G1, the
// candidates), the candidates of one origin, and the first finding a region's G1 failed on.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "agents/coder/fusion/fusion.h"
#include "artifact/bundle.h"
#include "verify/region_host.h"

namespace kopt::testing {

struct Planned {
  std::unique_ptr<ir::Bundle> bundle;
  verify::RegionFacts facts;
  agents::fusion::RegionPlan plan;
  const ir::Artifact& art() const { return *bundle->graphs.at(0); }
};

// `dir`: a bundle, absolute or relative to the source tree.
inline Planned plan(const std::string& dir) {
  std::filesystem::path path = dir;
  if (path.is_relative()) path = std::filesystem::path(KOPT_SOURCE_DIR) / dir;
  Planned p{ir::load_bundle(path.string()), {}, {}};
  const ir::Artifact& a = p.art();
  auto rs = profile::regions(a, *a.entry_function(), p.bundle->meta["graphs"][0]["args"]);
  p.facts = profile::facts(rs.at(0));
  p.plan = agents::fusion::plan_region(a, *a.entry_function(), rs.at(0));
  return p;
}

inline std::vector<const agents::fusion::RegionCandidate*> of_origin(const Planned& p, const std::string& origin) {
  std::vector<const agents::fusion::RegionCandidate*> out;
  for (const auto& c : p.plan.candidates)
    if (c.origin == origin) out.push_back(&c);
  return out;
}

// Every decline of the plan, a line each.
inline std::string declined(const Planned& p) {
  std::string out;
  for (const std::string& d : p.plan.declined) out += d + "\n";
  return out;
}

inline std::string failing(const verify::RegionG1& r) {
  for (const auto& f : r.g1.findings)
    if (!f.passed) return f.check + ": " + f.message;
  return "";
}

}  // namespace kopt::testing
