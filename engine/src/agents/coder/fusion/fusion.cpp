#include "agents/coder/fusion/fusion.h"

#include <fmt/format.h>

#include "agents/coder/fusion/epilogue.h"
#include "agents/coder/fusion/prologue.h"
#include "verify/region_host.h"

namespace kopt::agents::fusion {

namespace {

struct Strategy {
  const char* name;
  std::optional<stitch::RegionEdit> (*build)(const Pair&, std::string*);
  const char* verb;  // the description: "<verb> consumer into producer"
};

const Strategy kStrategies[] = {
    {"epilogue", epilogue, "fold {1} into {0}'s store"},
    {"prologue", prologue, "inline {0} into {1}'s load"},
};

}  // namespace

RegionPlan plan_region(const ir::Artifact& a, const ir::Function& f, const profile::Region& r) {
  RegionPlan plan;
  for (size_t i : r.launches) plan.kernels.push_back(a.kernels[f.launches[i].kernel].name);
  if (r.launches.size() < 2) return plan;
  if (r.internal.empty()) {
    plan.declined.push_back("no internal buffer: every buffer the region writes is read after it");
    return plan;
  }
  for (const profile::RegionBuffer& b : r.internal) {
    // Which launches of the region pass the buffer at all: one writer and one reader only.
    std::vector<size_t> users;
    for (size_t i : r.launches)
      for (const auto& [param, text] : f.launches[i].bound)
        if (verify::storage_of(f, text) == b.name) {
          users.push_back(i);
          break;
        }
    if (users.size() != 2) {
      plan.declined.push_back(fmt::format("{}: passed to {} launches of the region; fusion needs one producer and "
                                          "one consumer", b.name, users.size()));
      continue;
    }
    Pair p{&a, &f, users[0], users[1], b.name};
    const std::string& kp = a.kernels[f.launches[p.producer].kernel].name;
    const std::string& kc = a.kernels[f.launches[p.consumer].kernel].name;
    for (const Strategy& s : kStrategies) {
      std::string why;
      if (auto e = s.build(p, &why)) {
        plan.candidates.push_back({fmt::format("r{}", plan.candidates.size() + 1), std::string("fusion:") + s.name,
                                   fmt::format(fmt::runtime(s.verb), kp, kc), std::move(*e)});
      } else {
        plan.declined.push_back(fmt::format("{} ({} -> {} through {}): {}", s.name, kp, kc, b.name, why));
      }
    }
  }
  return plan;
}

}  // namespace kopt::agents::fusion
