#include "agents/coder/fusion/fusion.h"

#include <set>
#include <tuple>

#include <fmt/format.h>

#include "agents/coder/fusion/epilogue.h"
#include "agents/coder/fusion/prologue.h"
#include "agents/coder/fusion/row_merge.h"
#include "agents/coder/fusion/column_loop.h"
#include "agents/coder/fusion/scan_segments.h"
#include "agents/coder/fusion/split.h"
#include "artifact/pin_config.h"
#include "verify/region_host.h"

namespace kopt::agents::fusion {

namespace {

struct Strategy {
  const char* name;
  std::optional<stitch::RegionEdit> (*build)(const Pair&, std::string*);
  const char* verb;  // the description: "<verb> consumer into producer"
  bool whole_pair;   // fuses every internal buffer of the pair at once: built once per pair
  // Other forms of a built edit, each with what it is, proposed before it (or null).
  std::vector<std::pair<std::string, stitch::RegionEdit>> (*variants)(const Pair&, const stitch::RegionEdit&);
};

const Strategy kStrategies[] = {
    // The fold through the buffer's digits, its composed form (the store over the producer's names) first.
    {"epilogue", epilogue_digits, "fold {1} into {0}'s store", false, epilogue_variants},
    {"prologue", prologue, "inline {0} into {1}'s load", false, nullptr},
    {"row_merge", row_merge, "merge {1} into {0}'s rows", true,
     [](const Pair&, const stitch::RegionEdit& e) { return row_merge_variants(e); }},
};

// The strategies above on every pair of launches the region's internal buffers join.
void fuse_pairs(const ir::Artifact& a, const ir::Function& f, const profile::Region& r,
                const std::map<std::string, std::string>& winners,
                const std::map<std::string, nlohmann::json>& pins, RegionPlan& plan);

}  // namespace

RegionPlan plan_region(const ir::Artifact& a, const ir::Function& f, const profile::Region& r,
                       const std::map<std::string, std::string>& winners,
                       const std::map<std::string, nlohmann::json>& pins) {
  RegionPlan plan;
  for (size_t i : r.launches) plan.kernels.push_back(a.kernels[f.launches[i].kernel].name);
  fuse_pairs(a, f, r, winners, pins, plan);
  // Splits after the fusions: in CPU mode the first accepted candidate stands, and a fusion saves bytes.
  for (size_t i : r.launches) {
    std::string why;
    const std::string& name = a.kernels[f.launches[i].kernel].name;
    if (a.kernels[f.launches[i].kernel].kind == "pointwise") {
      // A pointwise kernel that re-reads a large operand by column once a row: walked by columns instead.
      auto cols = column_loop(a, f, i, &why);
      if (cols.empty()) plan.declined.push_back(fmt::format("column loop ({}): {}", name, why));
      for (auto& [description, edit] : cols)
        plan.candidates.push_back({fmt::format("r{}", plan.candidates.size() + 1), "split:columns",
                                   fmt::format("{}: {}", name, description), std::move(edit)});
      continue;
    }
    // A looped scan carries its running value from block to block; any other looped kernel is read as
    // a reduction.
    const bool scan = a.kernels[f.launches[i].kernel].source.find("tl.associative_scan(") != std::string::npos;
    auto splits = scan ? scan_segment_split(a, f, i, &why) : segment_split(a, f, i, &why);
    if (splits.empty()) plan.declined.push_back(fmt::format("split ({}): {}", name, why));
    for (auto& [description, edit] : splits)
      plan.candidates.push_back({fmt::format("r{}", plan.candidates.size() + 1),
                                 scan ? "split:scan_segments"
                                      : edit.kernel.ends_with("_coop") ? "split:cooperative"
                                                                       : "split:segments",
                                 fmt::format("{}: {}", name, description), std::move(edit)});
  }
  return plan;
}

namespace {

void fuse_pairs(const ir::Artifact& a, const ir::Function& f, const profile::Region& r,
                const std::map<std::string, std::string>& winners,
                const std::map<std::string, nlohmann::json>& pins, RegionPlan& plan) {
  if (r.launches.size() < 2) return;
  if (r.internal.empty()) {
    plan.declined.push_back("no internal buffer: every buffer the region writes is read after it");
    return;
  }
  const std::vector<std::string> internal = profile::names(r.internal);
  std::set<std::tuple<const Strategy*, size_t, size_t>> built;  // whole-pair strategies already tried
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
    const ir::Kernel& kp = a.kernels[f.launches[users[0]].kernel];
    const ir::Kernel& kc = a.kernels[f.launches[users[1]].kernel];
    // A kernel's own source, pinned to its baseline config where the launch records have one.
    auto own = [&](const ir::Kernel& k) {
      auto pin = pins.find(k.name);
      if (pin == pins.end()) return k.source;
      return ir::pin_baseline_config(k, k.source, pin->second).value_or(k.source);
    };
    auto won = [&](const ir::Kernel& k) {
      auto it = winners.find(k.name);
      return it == winners.end() ? own(k) : it->second;
    };
    // The winners' sources first (when either kernel has one), then the kernels' own.
    std::vector<Pair> bases;
    if (won(kp) != own(kp) || won(kc) != own(kc))
      bases.push_back({&a, &f, users[0], users[1], b.name, internal, won(kp), won(kc)});
    bases.push_back({&a, &f, users[0], users[1], b.name, internal, own(kp), own(kc)});
    for (const Strategy& s : kStrategies) {
      if (s.whole_pair && !built.insert({&s, users[0], users[1]}).second) continue;
      for (const Pair& p : bases) {
        bool on_winners = &p != &bases.back();
        std::string why;
        if (auto e = s.build(p, &why)) {
          std::string what = fmt::format(fmt::runtime(s.verb), kp.name, kc.name);
          std::string base = on_winners ? " (on the per-kernel winners)" : "";
          auto add = [&](std::string description, stitch::RegionEdit edit) {
            plan.candidates.push_back({fmt::format("r{}", plan.candidates.size() + 1), std::string("fusion:") + s.name,
                                       std::move(description), std::move(edit)});
          };
          if (s.variants)
            for (auto& [note, v] : s.variants(p, *e)) add(fmt::format("{} ({}){}", what, note, base), std::move(v));
          add(what + base, std::move(*e));
        } else {
          plan.declined.push_back(fmt::format("{} ({} -> {} through {}{}): {}", s.name, kp.name, kc.name, b.name,
                                              on_winners ? ", per-kernel winners" : "", why));
        }
      }
    }
  }
}

}  // namespace

}  // namespace kopt::agents::fusion
