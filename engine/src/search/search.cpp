#include "search/search.h"

#include <algorithm>

#include <fmt/format.h>

#include "results/key.h"
#include "results/record.h"
#include "verify/outputs.h"
#include "worker/client.h"

namespace kopt::search {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::optional<double> g4_speedup(const verify::CascadeResult& r) {
  for (const auto& g : r.gates)
    if (g.gate == "G4" && g.status == verify::GateStatus::passed && g.evidence.contains("speedup")) return g.evidence["speedup"].get<double>();
  return std::nullopt;
}

// Appends `c` with the next id, or returns SIZE_MAX if that source was proposed before (measured once).
size_t add_candidate(std::vector<CandidateRecord>& candidates, agents::Candidate c) {
  std::string h = verify::source_hash(c.source);
  for (const auto& r : candidates)
    if (r.hash == h) return SIZE_MAX;
  c.id = fmt::format("c{}", candidates.size() + 1);
  CandidateRecord rec;
  rec.candidate = std::move(c);
  rec.hash = h;
  candidates.push_back(std::move(rec));
  return candidates.size() - 1;
}

// Candidates compiled and timed per screen request. The budget is checked between requests, and
// one request always finishes: batches of 40 let a 10 s budget run for 100 s on 32K-wide rows
// (suite run on the H200). 16 is one wave of the GPU host's compile pool (16 cores per GPU), so
// smaller batches cost little compile throughput and stop a spent budget 2.5x sooner.
constexpr size_t kScreenBatch = 16;

class KernelSearch {
 public:
  KernelSearch(worker::Supervisor& sup, const ir::Bundle& b, agents::Agents& a, const agents::KernelProfile& k,
               const SearchOptions& o, Cache& cache, const Progress& progress)
      : sup_(sup), b_(b), a_(a), o_(o), cache_(cache), progress_(progress) {
    out_.profile = k;
    for (size_t g = 0; g < b.graphs.size(); ++g)
      if (b.graphs[g]->find_kernel(k.kernel->name) == k.kernel) graph_ = g;
  }

  KernelOutcome run() {
    auto t0 = Clock::now();
    out_ = propose(a_, out_.profile);
    const auto& k = out_.profile;
    if (out_.plan.strategies.empty()) return finish(t0);
    say(fmt::format("{} candidate(s) proposed ({})", out_.candidates.size(), fmt::join(out_.plan.strategies, ", ")));
    // Screening stops at three quarters of the time left, so that the fastest candidate it found
    // still gets its cascade within the budget (or earlier where the cascade's estimate is larger). A
    // cascade starts only when its estimate fits in what is left (search/cost.h); the first of a kernel
    // also when the user asked for cascades (--max-cascades).
    // On a GPU the candidates that compile for tens of seconds (Candidate::screen_last) are screened only
    // after the others' best has had its cascade: one batch of them took the whole budget that a launch
    // config 7.9x faster than the baseline needed for its cascade (max_pool2d k7, session 24).
    std::vector<size_t> first, late;
    for (size_t i = 0; i < out_.candidates.size(); ++i)
      (o_.gpu && out_.candidates[i].candidate.screen_last ? late : first).push_back(i);
    // Screening also leaves a cascade's estimate before the deadline (a 5 GB kernel's 39 s cascade found
    // 13 s left after 49 s of screening), but screens for at least a quarter of the time.
    earlier_s_ = earlier_cascade_s();
    auto keep = o_.deadline - std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(cascade_estimate()));
    std::vector<size_t> order =
        screen(first, std::max(t0 + (o_.deadline - t0) / 4, std::min(t0 + (o_.deadline - t0) * 3 / 4, keep)));
    size_t cascades = 0;
    for (size_t i : order) {
      if (cascades >= o_.max_cascades || !may_start(i, cascades == 0)) break;
      ++cascades;
      if (verify(i) && o_.gpu) break;  // the fastest screened candidate that passes is the one to tune
      if (!o_.gpu && out_.chosen) break;
      if (!out_.candidates[i].result || out_.candidates[i].result->accepted) continue;
      if (auto fix = a_.reviewer->repair(k, out_.candidates[i].candidate, *out_.candidates[i].result)) {
        size_t j = add(std::move(*fix));
        if (j != SIZE_MAX && cascades < o_.max_cascades && may_start(j, false)) ++cascades, verify(j);
      }
    }
    if (!late.empty() && !near_floor()) verify_late(late, cascades);
    else if (!late.empty())
      for (size_t i : late)
        out_.candidates[i].screen_error = fmt::format("not screened: the chosen candidate is within {:.0f}% of the "
                                                      "kernel's floor", (o_.near_floor - 1) * 100);
    for (size_t r = 0; o_.gpu && out_.chosen && r < o_.tune_rounds && !out_of_time() && !near_floor(); ++r) {
      std::vector<std::string> tried;
      for (const auto& c : out_.candidates) tried.push_back(c.hash);
      size_t before = out_.candidates.size();
      for (auto& c : a_.tuner->neighbours(k, out_.candidates[*out_.chosen].candidate, tried)) add(std::move(c));
      std::vector<size_t> fresh;
      for (size_t i = before; i < out_.candidates.size(); ++i) fresh.push_back(i);
      if (fresh.empty()) break;
      std::vector<size_t> ranked = screen(fresh, o_.deadline);
      double best = out_.candidates[*out_.chosen].screen_ratio.value_or(1.0);
      if (ranked.empty() || out_.candidates[ranked.front()].screen_ratio.value_or(9) >= best) break;
      say(fmt::format("tuning round {}: {} neighbour(s), best screened {:.3f}x of baseline", r + 1, fresh.size(),
                      *out_.candidates[ranked.front()].screen_ratio));
      if (!may_start(ranked.front(), false)) break;
      verify(ranked.front());
    }
    if (!out_.chosen && sup_.down()) out_.note = "not finished: the job was interrupted";
    else if (!out_.chosen && !not_tried_.empty()) out_.note = not_tried_;
    else if (!out_.chosen) out_.note = o_.gpu ? fallback_note() : "fallback: no candidate passed G1-G3";
    return finish(t0);
  }

 private:
  void say(const std::string& what) { progress_(fmt::format("{}: {}", out_.profile.kernel->name, what)); }
  // One launch of the kernel (its time per model run over its launches per run; 0 where not measured).
  double launch_ms() const {
    const auto& k = out_.profile;
    return k.time_ms ? *k.time_ms / std::max(1.0, k.calls_per_run) : 0.0;
  }
  int reps() const { return screen_reps(o_.screen_reps, launch_ms()); }
  bool out_of_time() const { return Clock::now() >= o_.deadline; }

  // The slow-compiling candidates, screened in what is left after a cascade's worth of time is kept back
  // (their compiles are cut off there: the worker's compile limit), and the fastest of them verified when it
  // screened faster than the candidate already chosen.
  void verify_late(const std::vector<size_t>& late, size_t& cascades) {
    double est = cascade_estimate();
    Clock::time_point until = o_.deadline - std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(est));
    if (Clock::now() >= until) {
      for (size_t i : late) out_.candidates[i].screen_error = "not screened: the budget was spent";
      say(fmt::format("{} slow-compiling candidate(s) not screened: the budget left keeps {} for a cascade",
                      late.size(), seconds_text(est)));
      return;
    }
    std::vector<size_t> ranked = screen(late, until, until);
    double best = out_.chosen ? out_.candidates[*out_.chosen].screen_ratio.value_or(1.0) : 1.0;
    for (size_t i : ranked) {
      if (*out_.candidates[i].screen_ratio >= best || cascades >= o_.max_cascades) break;
      if (!may_start(i, cascades == 0)) break;
      ++cascades;
      if (verify(i)) break;
    }
  }
  double cascade_estimate() const {
    const auto& k = out_.profile;
    return cascade_seconds(o_.cost, kernel_elements(*b_.graphs.at(graph_), *k.kernel), earlier_s_,
                           static_cast<double>(k.cost.bytes()), k.time_ms.value_or(0.0),
                           timing_reps(o_.cascade.reps, launch_ms()));
  }

  // Whether candidate i's cascade may start: not after an interrupt; otherwise when its estimate fits in the
  // time left, or it is the kernel's first and the user asked for cascades. A candidate refused records why,
  // and so does the kernel when none of its candidates got a cascade.
  bool may_start(size_t i, bool first) {
    CandidateRecord& rec = out_.candidates[i];
    if (sup_.down()) {
      rec.not_run = "not run: the job was interrupted";
      return false;
    }
    double est = cascade_estimate();
    double left = std::chrono::duration<double>(o_.deadline - Clock::now()).count();
    if (est <= left) return true;
    if (first && o_.first_cascade_always) {
      say(fmt::format("{}: its cascade needs about {}, {} of the budget left; run as --max-cascades asks",
                      rec.candidate.id, seconds_text(est), seconds_text(std::max(0.0, left))));
      return true;
    }
    rec.not_run = fmt::format("not run: its cascade would take about {} and the search had {} of the budget left",
                              seconds_text(est), seconds_text(std::max(0.0, left)));
    if (first)
      not_tried_ = fmt::format("not tried: a cascade would take about {} ({}), the search had {} of the budget left; a "
                               "--budget about {} larger would allow one{}",
                               seconds_text(est), earlier_s_ ? "as long as an earlier one of this kernel"
                                                             : o_.gpu ? "a compile and the model runs"
                                                                      : "the gates' runs in the interpreter",
                               seconds_text(std::max(0.0, left)), seconds_text(est - std::max(0.0, left)),
                               o_.gpu ? "" : ", or a GPU");
    say(rec.not_run);
    return false;
  }
  // What a cascade of this kernel took before, in an earlier job on the same bundle (results database).
  std::optional<double> earlier_cascade_s() {
    std::lock_guard lock(cache_.mu);
    if (auto r = cache_.db.latest_record("cascade_seconds", cache_key("any")); r && r->contains("seconds"))
      return (*r)["seconds"].get<double>();
    return std::nullopt;
  }
  // The key of this kernel's records for one candidate (results/key.h).
  std::string cache_key(const std::string& cand_hash) const {
    return results::cache_key(o_.cache_prefix, out_.profile.kernel->source, out_.profile.launches, cand_hash);
  }
  bool near_floor() const {
    const auto& k = out_.profile;
    if (!k.time_ms || !k.floor_ms || !out_.speedup) return false;
    return *k.time_ms / *out_.speedup <= o_.near_floor * *k.floor_ms;
  }

  size_t add(agents::Candidate c) { return add_candidate(out_.candidates, std::move(c)); }

  // Times the candidates briefly against the original (GPU) and returns the ones worth a
  // cascade, fastest first; no batch starts at `until` or later (nor past the budget). CPU mode:
  // nothing is timed; the coder's order stands.
  std::vector<size_t> screen(const std::vector<size_t>& idx, Clock::time_point until,
                             std::optional<Clock::time_point> compile_until = std::nullopt) {
    if (!o_.gpu) return idx;
    std::vector<size_t> todo;
    for (size_t i : idx) {
      std::lock_guard lock(cache_.mu);
      if (auto hit = cache_.db.latest_record("screen", cache_key(out_.candidates[i].hash))) {
        out_.candidates[i].cached = true;
        if (hit->contains("ratio")) out_.candidates[i].screen_ratio = (*hit)["ratio"].get<double>();
        else out_.candidates[i].screen_error = hit->value("error", "");
      } else {
        todo.push_back(i);
      }
    }
    // In batches, in the coder's order (templates first), so the budget is checked between batches:
    // compiling a hundred candidates takes longer than a single-op problem's whole budget. A batch holds
    // what can be screened before `until` (cost.h: a slow kernel's candidates cost seconds each).
    for (size_t from = 0; from < todo.size();) {
      double left = std::chrono::duration<double>(std::min(until, o_.deadline) - Clock::now()).count();
      size_t n = screen_batch_size(left, launch_ms(), reps(), per_candidate_s_, kScreenBatch);
      if (n == 0) {  // not one more ends before `until`: the rest would take the time kept for a cascade
        for (size_t j = from; j < todo.size(); ++j)
          out_.candidates[todo[j]].screen_error =
              "not screened: one more would not end before the time kept for a cascade";
        say(fmt::format("{} candidate(s) not screened: one more would end past the time kept for a cascade",
                        todo.size() - from));
        break;
      }
      std::vector<size_t> batch(todo.begin() + from, todo.begin() + std::min(todo.size(), from + n));
      from += batch.size();
      if (left <= 0) {
        for (size_t i : batch) out_.candidates[i].screen_error = "not screened: the budget was spent";
        continue;
      }
      std::optional<double> limit;
      if (compile_until) limit = std::max(0.0, std::chrono::duration<double>(*compile_until - Clock::now()).count());
      screen_batch(batch, limit);
    }
    std::vector<size_t> ranked;
    for (size_t i : idx) {
      CandidateRecord& rec = out_.candidates[i];
      // Worth a cascade only if the screen saw it beat the original by the margin G4 will demand.
      if (rec.screen_ratio && *rec.screen_ratio * o_.cascade.gamma < 1.0) ranked.push_back(i);
      else if (rec.outcome == Outcome::not_run) rec.outcome = Outcome::screened_out;
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
      return *out_.candidates[a].screen_ratio < *out_.candidates[b].screen_ratio;
    });
    return ranked;
  }

  void screen_batch(const std::vector<size_t>& todo, std::optional<double> compile_limit_s) {
    std::vector<std::string> sources;
    for (size_t i : todo) sources.push_back(out_.candidates[i].candidate.source);
    auto t0 = Clock::now();
    worker::ScreenReply r = worker::screen(sup_,
                            {.at = {b_.dir, graph_, out_.profile.kernel->name},
                             .sources = sources,
                             .reps = reps(),
                             .poison = verify::pure_output_args(*out_.profile.kernel),
                             .compile_limit_s = compile_limit_s},
                            o_.cascade.timeout);
    if (!r.ok) {
      std::string why = "screening failed: " + r.raw.value("error", "?").substr(0, 200);
      say(why);
      for (size_t i : todo) out_.candidates[i].screen_error = why;
      return;
    }
    if (r.candidates.size() != todo.size())
      throw worker::ReplyError(fmt::format("the worker's screen reply has {} candidate(s) for the {} sent",
                                           r.candidates.size(), todo.size()));
    // Where a slow search spent its time: compiling (a cold compile pool builds one at a time) or timing.
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    say(fmt::format("screened {} candidate(s) in {:.1f} s (compile {:.1f} s{}, run {:.1f} s)", todo.size(), took,
                    r.compile_s, r.parallel_compile ? ", parallel" : "", r.run_s));
    // What the next batch's candidates will cost each, less the compile wave and the baseline's own launches.
    double baseline_s = screen_launch_seconds(reps(), launch_ms());
    per_candidate_s_ = std::max(0.0, took - r.compile_s - baseline_s) / static_cast<double>(todo.size());
    for (size_t n = 0; n < todo.size(); ++n) {
      const worker::ScreenedCandidate& c = r.candidates[n];
      CandidateRecord& rec = out_.candidates[todo[n]];
      json stored;
      if (c.ok) rec.screen_ratio = c.median_ms / r.baseline_median_ms, stored["ratio"] = *rec.screen_ratio;
      else rec.screen_error = c.error, stored["error"] = rec.screen_error;
      // A compile cut off by the budget says nothing of the candidate: the next job screens it again.
      if (rec.screen_error.rfind("not screened", 0) == 0) continue;
      std::lock_guard lock(cache_.mu);
      cache_.db.add_record("screen", cache_key(rec.hash), stored);
    }
  }

  // The full cascade on one candidate (or its cached result). Returns whether it was accepted.
  bool verify(size_t i) {
    CandidateRecord& rec = out_.candidates[i];
    std::string key = cache_key(rec.hash);
    std::optional<json> hit;
    double cascade_s = 0;
    {
      std::lock_guard lock(cache_.mu);
      hit = cache_.db.latest_record("cascade", key);
    }
    if (hit) {
      rec.result = results::cascade_from_json(*hit);
      rec.cached = true;
    } else {
      auto t0 = Clock::now();
      verify::CascadeOptions co = o_.cascade;
      co.reps = timing_reps(co.reps, launch_ms());
      co.progress = [&](const std::string& line) { say(fmt::format("{} {}", rec.candidate.id, line)); };
      if (!o_.first_cascade_always) co.stop_at = o_.stop_at;
      rec.result = verify::run_cascade(sup_, b_, graph_, *out_.profile.kernel, rec.candidate.source, co);
      cascade_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (sup_.down()) {
        // Interrupted: the workers were stopped under it, so its gates' failures say nothing of the candidate.
        rec.result.reset();
        rec.not_run = "not run to the end: the job was interrupted";
        say(fmt::format("{}: {}", rec.candidate.id, rec.not_run));
        return false;
      }
      if (verify::cut_short(*rec.result)) {
        // Not a verdict: nothing cached but the time the whole cascade would have taken at the pace of its
        // runs so far, which the next estimate must allow.
        const json& g2 = rec.result->gates.back().evidence;
        double done = static_cast<double>(std::max<size_t>(1, g2.value("runs", json::array()).size()));
        double whole_s = cascade_s * std::max(1.0, g2.value("runs_planned", 1.0) / done);
        earlier_s_ = std::max(earlier_s_.value_or(0), whole_s);
        rec.result.reset();
        rec.not_run = fmt::format("not run to the end: the budget was spent after {} of its cascade",
                                  seconds_text(cascade_s));
        not_tried_ = fmt::format("not tried to the end: a cascade took more than {} and the budget was spent; a "
                                 "larger --budget would allow it, or a GPU",
                                 seconds_text(cascade_s));
        say(fmt::format("{}: {}", rec.candidate.id, rec.not_run));
        std::lock_guard lock(cache_.mu);
        cache_.db.add_record("cascade_seconds", cache_key("any"), {{"seconds", whole_s}});
        return false;
      }
      earlier_s_ = std::max(earlier_s_.value_or(0), cascade_s);
      std::lock_guard lock(cache_.mu);
      cache_.db.add_record("cascade", key, results::cascade_json(*rec.result));
      cache_.db.add_record("cascade_seconds", cache_key("any"), {{"seconds", cascade_s}});
    }
    rec.outcome = rec.result->accepted ? Outcome::accepted : Outcome::rejected;
    std::string at = rec.result->gates.empty() ? "" : rec.result->gates.back().gate;
    auto sp = g4_speedup(*rec.result);
    say(fmt::format("{} [{}] {}{}{}", rec.candidate.id, rec.candidate.description,
                    rec.result->accepted ? "accepted" : "rejected at " + at,
                    sp ? fmt::format(" ({:.3f}x)", *sp) : "",
                    rec.cached ? " (cached)" : fmt::format(" (cascade {:.1f} s)", cascade_s)));
    if (!rec.result->accepted) return false;
    // Keep the fastest accepted candidate (CPU mode: the first one; no speed is claimed).
    if (!out_.chosen || (sp && (!out_.speedup || *sp > *out_.speedup))) {
      out_.chosen = i;
      out_.speedup = sp;
    }
    return true;
  }

  // Why nothing was accepted, counted over every candidate: a row in a suite table must tell a
  // search that found nothing faster from one whose screening failed or whose budget ran out.
  std::string fallback_note() const {
    size_t rejected = 0, slower = 0, unscreened = 0, failed = 0, best_i = SIZE_MAX;
    std::string first_error;
    for (size_t i = 0; i < out_.candidates.size(); ++i) {
      const CandidateRecord& c = out_.candidates[i];
      if (c.outcome == Outcome::rejected) ++rejected;
      if (c.screen_ratio) {
        ++slower;
        if (best_i == SIZE_MAX || *c.screen_ratio < *out_.candidates[best_i].screen_ratio) best_i = i;
      } else if (c.screen_error.rfind("not screened", 0) == 0) {
        ++unscreened;
      } else if (!c.screen_error.empty()) {
        ++failed;
        if (first_error.empty()) first_error = c.screen_error.substr(0, 160);
      }
    }
    std::string note = fmt::format("fallback to the compiler's kernel: no candidate passed every gate ({} verified "
                                   "and rejected; {} screened",
                                   rejected, slower);
    if (best_i != SIZE_MAX)
      note += fmt::format(", best {:.3f}x of the baseline's time", *out_.candidates[best_i].screen_ratio);
    if (failed) note += fmt::format("; {} failed to screen, first: {}", failed, first_error);
    if (unscreened) note += fmt::format("; {} not screened: the budget was spent", unscreened);
    return note + ")";
  }

  KernelOutcome finish(Clock::time_point t0) {
    out_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::move(out_);
  }

  worker::Supervisor& sup_;
  const ir::Bundle& b_;
  agents::Agents& a_;
  const SearchOptions& o_;
  Cache& cache_;
  const Progress& progress_;
  size_t graph_ = 0;
  KernelOutcome out_;
  std::optional<double> earlier_s_;  // the longest cascade of this kernel measured so far
  std::optional<double> per_candidate_s_;  // what one candidate cost the last screen batch (seconds)
  std::string not_tried_;            // the kernel's note when the budget let none of its cascades start
};

}  // namespace

KernelOutcome search_kernel(worker::Supervisor& sup, const ir::Bundle& bundle, agents::Agents& agents,
                            const agents::KernelProfile& k, const SearchOptions& o, Cache& cache,
                            const Progress& progress) {
  return KernelSearch(sup, bundle, agents, k, o, cache, progress).run();
}

KernelOutcome propose(agents::Agents& agents, const agents::KernelProfile& k) {
  KernelOutcome out;
  out.profile = k;
  out.plan = agents.planner->plan(k);
  if (out.plan.strategies.empty()) {
    out.note = "not searched: " + out.plan.note;
    return out;
  }
  for (auto& c : agents.coder->propose(k, out.plan)) add_candidate(out.candidates, std::move(c));
  return out;
}

std::optional<size_t> least_saving_accepted(const std::vector<KernelOutcome>& outcomes) {
  std::optional<size_t> pick;
  double least = 0;
  size_t accepted = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const KernelOutcome& k = outcomes[i];
    if (!k.chosen) continue;
    ++accepted;
    double saving = 0;
    if (k.profile.time_ms && k.speedup && *k.speedup > 0)
      saving = *k.profile.time_ms * (1 - 1 / *k.speedup);
    if (!pick || saving <= least) pick = i, least = saving;
  }
  return accepted >= 2 ? pick : std::nullopt;
}

json candidate_json(const CandidateRecord& r) {
  json gates = json::array();
  std::optional<std::string> failed;
  if (r.result) {
    for (const auto& g : r.result->gates) {
      gates.push_back({{"gate", g.gate}, {"status", g.status}, {"evidence", g.evidence}});
      if (g.status == verify::GateStatus::failed) failed = g.gate;
    }
  }
  std::optional<double> sp = r.result ? g4_speedup(*r.result) : std::nullopt;
  json j = {{"id", r.candidate.id}, {"origin", r.candidate.origin}, {"description", r.candidate.description},
            {"hash", r.hash}, {"outcome", r.outcome}, {"failed_gate", failed ? json(*failed) : json(nullptr)},
            {"speedup", sp ? json(*sp) : json(nullptr)}, {"gates", gates}, {"cached", r.cached},
            {"config", r.candidate.config}, {"parent", r.candidate.parent}};
  if (r.screen_ratio) j["screen_ratio"] = *r.screen_ratio;
  if (!r.screen_error.empty()) j["screen_error"] = r.screen_error;
  if (!r.not_run.empty()) j["not_run"] = r.not_run;
  return j;
}

}  // namespace kopt::search
