#include "search/regions.h"

#include <algorithm>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "results/key.h"
#include "search/cost.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "util/error.h"
#include "verify/cascade.h"

namespace kopt::search {

using nlohmann::json;

namespace {

// On a GPU, accepted region candidates timed per region at most: each is a whole region cascade.
constexpr size_t kMaxTimedRegionCandidates = 3;
// The model runs of a region candidate's screen (verify::screen_region): enough to tell a candidate slower
// than the compiler's kernels, not to rank close ones (G4 does that).
constexpr int kRegionScreenReps = 5;
// A screen's compile and load of the candidate module, beside its model runs.
constexpr double kScreenSeconds = 3.0;

// What a kernel's per-kernel winner saves per model run (ms; 0 when not measured): its time per run (all
// of its calls, as the profile measures it) times 1 - 1/speedup.
double saving(const KernelOutcome& k) {
  if (!k.chosen || !k.profile.time_ms || !k.speedup || *k.speedup <= 0) return 0;
  return *k.profile.time_ms * (1 - 1 / *k.speedup);
}

// The per-kernel outcomes whose every launch is among `launches` (the ones a region candidate
// replaces): the candidate replaces those.
std::vector<size_t> replaced_kernels(const ir::Artifact& a, const ir::Function& f, const RegionOutcome& r,
                                     const std::vector<size_t>& launches, const std::vector<KernelOutcome>& outcomes) {
  std::vector<size_t> out;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const KernelOutcome& k = outcomes[i];
    if (k.profile.graph != r.graph || !k.profile.kernel) continue;
    size_t in_region = 0;
    for (size_t l : launches) in_region += &a.kernels[f.launches[l].kernel] == k.profile.kernel;
    if (in_region > 0 && in_region == k.profile.kernel->launch_count) out.push_back(i);
  }
  return out;
}

// The bytes each profiled kernel moves in one model run (a GPU cascade's estimate grows with them).
using KernelBytes = std::map<const ir::Kernel*, double>;

// One region cascade's estimate: it runs every kernel of the region for the original's statements and the
// candidate's, about the sum of its kernels' own cascades (each kernel counted once).
double region_estimate(const ir::Artifact& a, const ir::Function& f, const profile::Region& r, const SearchOptions& o,
                       const KernelBytes& bytes) {
  double est = 0;
  std::set<const ir::Kernel*> seen;
  for (size_t li : r.launches) {
    const ir::Kernel& k = a.kernels[f.launches[li].kernel];
    if (!seen.insert(&k).second) continue;
    auto b = bytes.find(&k);
    est += cascade_seconds(o.cost, kernel_elements(a, k), std::nullopt, b == bytes.end() ? 0.0 : b->second);
  }
  return est;
}

// A region candidate on its way to its cascade: its module, its results-database key and cached result.
struct Pending {
  const agents::fusion::RegionCandidate* c = nullptr;
  std::string module, key;
  std::optional<json> hit;
  std::optional<double> screen_ratio;  // GPU: the model's speed with it over without, in its screen
};

Pending pending(const ir::Bundle& bundle, size_t graph, const RegionOutcome& r, const agents::fusion::RegionCandidate& c,
                std::string module, const std::vector<KernelOutcome>& outcomes, const SearchOptions& o, Cache& cache) {
  std::vector<json> launches;
  for (const KernelOutcome& k : outcomes) {
    if (k.profile.graph != graph || !k.profile.kernel) continue;
    if (std::count(r.plan.kernels.begin(), r.plan.kernels.end(), k.profile.kernel->name))
      launches.insert(launches.end(), k.profile.launches.begin(), k.profile.launches.end());
  }
  Pending p{&c, std::move(module), "", std::nullopt, std::nullopt};
  p.key = results::cache_key(o.cache_prefix, bundle.graphs[graph]->module->source(), launches,
                             verify::source_hash(p.module));
  std::lock_guard lock(cache.mu);
  p.hit = cache.db.latest_record("region_cascade", p.key);
  return p;
}

// The region cascade of a pending candidate, or its cached result.
RegionTried verified(worker::Supervisor& sup, const ir::Bundle& bundle, size_t graph, const RegionOutcome& r,
                     const Pending& p, const SearchOptions& o, Cache& cache) {
  RegionTried t{*p.c, {}, p.hit.has_value(), p.screen_ratio};
  if (p.hit) {
    t.result.cascade = results::cascade_from_json(p.hit->at("cascade"));
    if ((*p.hit)["speedup"].is_number()) t.result.speedup = (*p.hit)["speedup"].get<double>();
    if ((*p.hit)["saved_ms"].is_number()) t.result.saved_ms = (*p.hit)["saved_ms"].get<double>();
    if (t.result.cascade.accepted) t.result.edit = p.c->edit;
    return t;
  }
  t.result = verify::run_region_cascade(sup, bundle, graph, r.facts, p.module, o.cascade);
  json stored = {{"cascade", results::cascade_json(t.result.cascade)},
                 {"speedup", t.result.speedup ? json(*t.result.speedup) : json(nullptr)},
                 {"saved_ms", t.result.saved_ms ? json(*t.result.saved_ms) : json(nullptr)}};
  std::lock_guard lock(cache.mu);
  cache.db.add_record("region_cascade", p.key, stored);
  return t;
}

// report.json's `outcome` of a tried candidate.
const char* outcome(const RegionTried& t) {
  return t.result.cascade.accepted ? "accepted" : t.screened_out() ? "screened_out" : "rejected";
}

std::string verdict(const RegionTried& t) {
  if (t.result.cascade.accepted) return "accepted";
  if (t.screened_out())
    return t.screen_ratio ? fmt::format("screened out ({:.2f}x the model's speed)", *t.screen_ratio) : "screened out";
  return "rejected at " + t.result.cascade.gates.back().gate;
}

}  // namespace

std::vector<RegionOutcome> search_regions(worker::Supervisor& sup, const ir::Bundle& bundle, agents::Coder& coder,
                                          std::vector<KernelOutcome>& outcomes, const SearchOptions& o, Cache& cache,
                                          const Progress& progress) {
  std::vector<RegionOutcome> out;
  KernelBytes bytes;
  for (const KernelOutcome& k : outcomes)
    if (k.profile.kernel) bytes[k.profile.kernel] = static_cast<double>(k.profile.cost.bytes());
  profile::each_graph_regions(bundle, [&](size_t g, const ir::Artifact& a, const ir::Function* f,
                                          const std::vector<profile::Region>& rs) {
    for (size_t i = 0; i < rs.size(); ++i) {
      std::map<std::string, std::string> winners;
      for (const KernelOutcome& k : outcomes)
        if (k.profile.graph == g && k.profile.kernel && k.chosen)
          winners[k.profile.kernel->name] = k.candidates[*k.chosen].candidate.source;
      agents::RegionUnit unit{&a, f, &rs[i], g, i, winners, o.cascade.pins};
      RegionOutcome r{g, i, profile::facts(rs[i]), coder.propose_region(unit), {}, {}, {}, {}};
      if (r.plan.candidates.empty() && rs[i].launches.size() < 2) continue;  // one launch, nothing to split
      if (r.plan.candidates.empty()) r.note = "no fusion candidate (see declined)";
      std::set<std::string> seen;  // candidates built alike (on the winners and on the kernels' own sources)
      size_t accepted = 0;
      // A region cascade that does not fit before the deadline is not started (in CPU mode one took 33 s with
      // 7 s left, and the end-to-end gate then found no time: every accepted kernel of the job was dropped).
      double est = region_estimate(a, *f, rs[i], o, bytes);
      auto left_s = [&] { return std::chrono::duration<double>(o.deadline - std::chrono::steady_clock::now()).count(); };
      auto report = [&](const RegionTried& t) {
        progress(fmt::format("region {}: {} [{}] {}{}", i, t.candidate.id, t.candidate.description, verdict(t),
                             t.cached ? " (cached)" : ""));
      };
      // First every candidate's module and cached result; on a GPU each uncached one is screened (G1 and a few
      // model runs, verify::screen_region) while a cascade would still fit after it: one not faster by γ goes
      // no further, the others go to their cascades fastest first (session 36: a softmax over 1873 rows of
      // 1.2M had three two-launch splits of 1.53x to 2.14x, and the region's time held one cascade).
      const double screen_s = region_screen_seconds(o);
      std::vector<Pending> queue;
      for (const agents::fusion::RegionCandidate& c : r.plan.candidates) {
        if (!seen.insert(c.edit.source + '\0' + c.edit.args).second) continue;
        std::string module;
        try {
          module = stitch::stitch(a, {}, {}, {c.edit});
        } catch (const UserError& e) {  // the host code does not allow the edit (a view of the buffer, ...)
          r.plan.declined.push_back(fmt::format("{} ({}): {}", c.origin, c.id, e.what()));
          continue;
        }
        Pending p = pending(bundle, g, r, c, std::move(module), outcomes, o, cache);
        if (!p.hit && o.gpu && left_s() >= screen_s + est) {
          verify::RegionScreen sc = verify::screen_region(sup, bundle, g, r.facts, p.module, o.cascade, kRegionScreenReps);
          if (sc.baseline_ms && sc.candidate_ms && *sc.candidate_ms > 0) p.screen_ratio = *sc.baseline_ms / *sc.candidate_ms;
          const bool slower = p.screen_ratio && *sc.candidate_ms * o.cascade.gamma > *sc.baseline_ms;
          if (sc.g1.status != verify::GateStatus::passed || slower) {
            RegionTried t{c, {}, false, p.screen_ratio};
            t.result.cascade.gates.push_back(sc.g1);
            report(t);
            r.tried.push_back(std::move(t));
            continue;
          }
        }
        queue.push_back(std::move(p));
      }
      // Cached results first (they cost nothing), then the screened fastest first, then the unscreened in the
      // coder's order.
      auto rank = [](const Pending& p) { return p.hit ? 0 : p.screen_ratio ? 1 : 2; };
      std::stable_sort(queue.begin(), queue.end(), [&](const Pending& x, const Pending& y) {
        if (rank(x) != rank(y)) return rank(x) < rank(y);
        return rank(x) == 1 && *x.screen_ratio > *y.screen_ratio;
      });
      for (const Pending& p : queue) {
        double left = left_s();
        if (left <= 0) {
          r.note = "the search budget was spent before this region's candidates ran";
          break;
        }
        if (!p.hit && est > left && !o.first_cascade_always) {
          r.note = fmt::format("not run: a cascade of this region would take about {} and the search had {} of the "
                               "budget left", seconds_text(est), seconds_text(left));
          break;
        }
        if (accepted >= kMaxTimedRegionCandidates) break;
        r.tried.push_back(verified(sup, bundle, g, r, p, o, cache));
        const RegionTried& t = r.tried.back();
        report(t);
        // In CPU mode nothing is timed, so the first accepted stands; on a GPU the others are timed too (budget
        // allowing) and the one saving most is taken.
        if (t.result.cascade.accepted && !(t.result.cascade.performance_measured && t.result.saved_ms)) break;
        accepted += t.result.cascade.accepted;
      }
      std::optional<size_t> best;
      for (size_t t = 0; t < r.tried.size(); ++t) {
        const verify::RegionCascadeResult& res = r.tried[t].result;
        if (!res.cascade.accepted) continue;
        if (!best || res.saved_ms.value_or(0) > r.tried[*best].result.saved_ms.value_or(0)) best = t;
      }
      if (best) {
        const verify::RegionCascadeResult& res = r.tried[*best].result;
        const stitch::RegionEdit& edit = r.tried[*best].candidate.edit;
        std::vector<size_t> kernels = replaced_kernels(a, *f, r, edit.launches, outcomes);
        double per_kernel = 0;
        bool any_winner = false;
        for (size_t k : kernels) per_kernel += saving(outcomes[k]), any_winner = any_winner || outcomes[k].chosen;
        bool take = true;
        if (res.cascade.performance_measured && res.saved_ms) {
          take = *res.saved_ms > per_kernel;
          r.note = fmt::format("the region's candidate saves {:.4f} ms per run, its kernels' own winners {:.4f} ms: {}",
                               *res.saved_ms, per_kernel, take ? "chosen" : "kept the per-kernel results");
        } else if (edit.internal.empty()) {
          // A split moves the same bytes as the kernel: untimed, it is no better than a winner of the kernel's own.
          take = !any_winner;
          r.note = take ? "not timed (CPU mode): chosen, its kernels have no per-kernel winner"
                        : "not timed (CPU mode): kept the per-kernel results (the candidate removes no internal "
                          "buffer)";
        } else {
          r.note = fmt::format("not timed (CPU mode): chosen for its floor, its internal buffers ({}) no longer "
                               "written and read back",
                               fmt::join(r.facts.internal, ", "));
        }
        if (take) {
          r.chosen = best;
          for (size_t k : kernels) {
            KernelOutcome& ko = outcomes[k];
            r.replaced.push_back({k, ko.chosen, ko.speedup});
            ko.chosen.reset(), ko.speedup.reset();
            ko.note = fmt::format("its launches are {} region {} of graph {} ({})",
                                  edit.is_split() ? "split in" : "fused into", i, g,
                                  r.tried[*best].candidate.description);
          }
        }
      } else if (!r.tried.empty() && r.note.empty()) {
        r.note = "no fusion candidate passed the gates";
      }
      out.push_back(std::move(r));
    }
  });
  return out;
}

double region_reserve_seconds(const ir::Bundle& bundle, const std::vector<agents::KernelProfile>& profiles,
                              const SearchOptions& o) {
  KernelBytes bytes;
  for (const agents::KernelProfile& k : profiles)
    if (k.kernel) bytes[k.kernel] = static_cast<double>(k.cost.bytes());
  double total = 0;
  profile::each_graph_regions(bundle, [&](size_t, const ir::Artifact& a, const ir::Function* f,
                                          const std::vector<profile::Region>& rs) {
    for (const profile::Region& r : rs) {
      const size_t n = agents::fusion::plan_region(a, *f, r).candidates.size();
      // Each candidate's screen as well: row 46's region (three two-launch splits, the best 2.14x) needed them
      // and a cascade, and the per-kernel search left it the cascade's estimate alone (session 36).
      if (n) total += region_estimate(a, *f, r, o, bytes) + static_cast<double>(n) * region_screen_seconds(o);
    }
  });
  return total;
}

double region_screen_seconds(const SearchOptions& o) {
  return o.gpu ? kScreenSeconds + 2.0 * kRegionScreenReps * o.cost.model_run_s : 0.0;
}

void drop_region(RegionOutcome& r, std::vector<KernelOutcome>& outcomes, const std::string& why) {
  for (const RegionOutcome::Saved& s : r.replaced) {
    KernelOutcome& k = outcomes[s.outcome];
    k.chosen = s.chosen, k.speedup = s.speedup, k.note.clear();
  }
  r.replaced.clear();
  r.chosen.reset();
  r.note = why;
}

std::vector<stitch::RegionEdit> chosen_edits(const std::vector<RegionOutcome>& rs, size_t graph) {
  std::vector<stitch::RegionEdit> out;
  for (const RegionOutcome& r : rs)
    if (r.graph == graph && r.chosen) out.push_back(r.tried[*r.chosen].candidate.edit);
  return out;
}

namespace {

json added_names(const stitch::RegionEdit& e) {
  json out = json::array();
  for (const stitch::NewLaunch& n : e.added()) out.push_back(n.kernel);
  return out;
}

json scratch_names(const stitch::RegionEdit& e) {
  json out = json::array();
  for (const stitch::Scratch& s : e.scratch) out.push_back(s.name);
  return out;
}

}  // namespace

json region_json(const RegionOutcome& r) {
  json cands = json::array();
  for (const RegionTried& t : r.tried) {
    json gates = results::cascade_json(t.result.cascade).value("gates", json::array());
    cands.push_back({{"id", t.candidate.id},
                     {"origin", t.candidate.origin},
                     {"description", t.candidate.description},
                     {"kernel", t.candidate.edit.kernel},
                     {"added_kernels", added_names(t.candidate.edit)},
                     {"scratch", scratch_names(t.candidate.edit)},
                     {"launches", t.candidate.edit.launches},
                     {"internal", t.candidate.edit.internal},
                     {"accepted", t.result.cascade.accepted},
                     {"cached", t.cached},
                     {"screen_ratio", t.screen_ratio ? json(*t.screen_ratio) : json(nullptr)},
                     {"outcome", outcome(t)},
                     {"speedup", t.result.speedup ? json(*t.result.speedup) : json(nullptr)},
                     {"gates", gates}});
  }
  return {{"tried", !r.tried.empty()},
          {"declined", r.plan.declined},
          {"candidates", cands},
          {"chosen", r.chosen ? json(r.tried[*r.chosen].candidate.id) : json(nullptr)},
          {"note", r.note}};
}

}  // namespace kopt::search
