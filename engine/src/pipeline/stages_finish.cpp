// The main job's stages from search to write (pipeline/stages.h): one search thread per worker over the
// ranked kernels, the region search (fusion), the accepted candidates and fused regions stitched into the
// modules, the end-to-end gate (with retries that leave a region or a kernel out), and the result directory
// written.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "pipeline/stages.h"
#include "verify/rules.h"
#include "util/error.h"
#include "verify/end_to_end.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

search::SearchOptions search_options(const Job& job) {
  search::SearchOptions so;
  so.gpu = job.gpu();
  so.max_cascades = job.o.max_cascades >= 0 ? static_cast<size_t>(job.o.max_cascades) : (job.gpu() ? 3 : 1);
  so.first_cascade_always = job.o.max_cascades >= 0;  // the user asked for cascades by number
  so.cost = job.cost;
  // The end-to-end gate's time is kept back: a kernel accepted without it would be left out.
  so.deadline = job.budget_end - std::chrono::milliseconds(static_cast<int64_t>(search::end_to_end_seconds(job.cost) * 1000));
  // A cascade whose candidate runs slower than estimated stops within a quarter of the budget past its end,
  // the end-to-end gate's time kept back there too.
  so.stop_at = so.deadline + std::chrono::milliseconds(static_cast<int64_t>(job.o.budget_s * search::kOverrun * 1000));
  so.cascade = job.o.gate;
  so.cascade.pins = job.pins;
  so.cache_prefix = job.gpu() ? fmt::format("{}|{}|{}", job.hello["gpu"].value("name", "?"),
                                            job.hello["versions"].value("torch", "?"),
                                            job.hello["versions"].value("triton", "?"))
                              : fmt::format("cpu|{}|{}", job.hello["versions"].value("torch", "?"),
                                            job.hello["versions"].value("triton", "?"));
  // A cached verdict holds only for the same gates: seeds, gamma and tolerances are part of the key,
  // and so is kernelopt's version (another release may judge the same candidate by other rules).
  so.cache_prefix += fmt::format("|kernelopt={}|rules={}|seeds={}|gamma={}|tol={}", KOPT_VERSION,
                                 verify::kRulesRevision, so.cascade.seeds, so.cascade.gamma,
                                 so.cascade.tol.to_json().dump());
  // G3 with the kept kernels pinned is another gate than G3 with them autotuning again; the pins'
  // values are not in the key (each worker autotunes afresh), the end-to-end gate checks the final module.
  if (!so.cascade.pins.empty()) so.cache_prefix += "|pinned";
  return so;
}

}  // namespace

void search(Job& job, agents::Agents& agents, results::ResultsDb& db) {
  if (!job.skip.empty()) return;
  search::SearchOptions so = search_options(job);
  // The region search comes after this one: where the built-in coder has region candidates (a fusion, a
  // segment split), their cascades' time is kept back (search::region_share_seconds: at most half of what is
  // left). GPU only: in CPU mode a kernel's search ends at its first accepted candidate.
  double left = std::chrono::duration<double>(so.deadline - Clock::now()).count();
  double reserve =
      so.gpu ? search::region_share_seconds(search::region_reserve_seconds(*job.bundle, job.ranked, so), left) : 0.0;
  if (reserve > 0) {
    so.deadline -= std::chrono::milliseconds(static_cast<int64_t>(reserve * 1000));
    job.say(fmt::format("{:.1f} s of the search kept back for the region search", reserve));
  }
  search::Cache cache{db, {}};
  std::mutex say_mu;
  // On a terminal one status line is redrawn in place (a progress bar over kernels and the
  // budget); otherwise every event is a plain line, for logs.
  const bool tty = !job.o.quiet && isatty(STDERR_FILENO);
  std::atomic<size_t> done{0};
  auto started = Clock::now();
  search::Progress progress = [&](const std::string& line) {
    std::lock_guard lock(say_mu);
    if (!tty) return job.say(line);
    job.mark(line);
    size_t n = job.ranked.size(), k = done.load();
    double used = std::chrono::duration<double>(Clock::now() - started).count();
    int width = 20, filled = n ? static_cast<int>(width * k / n) : width;
    std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    std::cerr << fmt::format("\r\033[K[kernelopt] [{}] {}/{} kernels, {:.0f}/{:.0f} s | {}", bar, k, n, used,
                             job.o.budget_s, line.substr(0, 90))
              << std::flush;
  };
  // One search thread per worker; kernels are taken in ranked order (most recoverable time first).
  job.outcomes.resize(job.ranked.size());
  std::atomic<size_t> next{0};
  size_t threads = std::max<size_t>(1, std::min(job.sup->hellos().size(), job.ranked.size()));
  auto work = [&] {
    for (size_t i; (i = next++) < job.ranked.size();) {
      if (job.sup->down()) break;  // interrupted: run_optimize lists the kernels not reached
      // "kernel 2/5 NAME: ...": where a long search is, on every line.
      search::Progress numbered = [&, i](const std::string& line) {
        progress(fmt::format("kernel {}/{} {}", i + 1, job.ranked.size(), line));
      };
      job.outcomes[i] = search::search_kernel(*job.sup, *job.bundle, agents, job.ranked[i], so, cache, numbered);
      ++done;
      const auto& k = job.outcomes[i];
      progress(k.chosen ? fmt::format("{}: accepted {}", k.profile.kernel->name, k.candidates[*k.chosen].candidate.id)
                        : fmt::format("{}: keeps the compiler's kernel", k.profile.kernel->name));
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (tty) std::cerr << "\n";
}

void regions(Job& job, agents::Agents& agents, results::ResultsDb& db) {
  if (!job.skip.empty()) return;
  search::SearchOptions so = search_options(job);
  search::Cache cache{db, {}};
  job.regions = search::search_regions(*job.sup, *job.bundle, *agents.coder, job.outcomes, so, cache,
                                       [&](const std::string& line) { job.say(line); });
  for (const search::RegionOutcome& r : job.regions)
    if (r.chosen)
      job.say(fmt::format("region {} of graph {}: {} ({})", r.index, r.graph,
                          r.tried[*r.chosen].candidate.edit.is_split() ? "split" : "fused", r.note));
}

void stitch_modules(Job& job) {
  job.stitched.clear();
  job.changed = false;
  std::vector<std::vector<stitch::Replacement>> reps(job.bundle->graphs.size());
  for (const search::KernelOutcome& k : job.outcomes)
    if (k.chosen)
      reps[k.profile.graph].push_back(
          {k.profile.kernel->name, k.candidates[*k.chosen].candidate.source, k.candidates[*k.chosen].candidate.id});
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g) {
    std::vector<stitch::RegionEdit> fused = search::chosen_edits(job.regions, g);
    job.stitched.push_back(stitch::stitch(*job.bundle->graphs[g], reps[g], job.pins, fused));
    job.changed = job.changed || !reps[g].empty() || !fused.empty();
  }
}

// End-to-end gate runs after the first that leave out one more kernel (docs/optimize.md).
constexpr int kE2eRetries = 2;

void end_to_end(Job& job) {
  if (!job.changed) return;
  // It runs when it fits, the overrun allowed included: kernels verified alone are not thrown away to save seconds
  // after a cascade ran over its estimate.
  if (double est = search::end_to_end_seconds(job.cost); est > job.left_s() + job.o.budget_s * search::kOverrun) {
    // Unverified as a whole, the accepted kernels cannot go into the result.
    job.fallback_note = fmt::format("the end-to-end gate would take about {} and {} of the budget were left: not run, "
                                    "so the accepted kernels are left out and the result is the baseline unchanged",
                                    search::seconds_text(est), search::seconds_text(std::max(0.0, job.left_s())));
    job.not_tried.push_back(job.fallback_note);
    job.say(job.fallback_note);
    job.changed = false;
    return;
  }
  job.say("end-to-end gate: the re-stitched model against the baseline");
  verify::CascadeOptions co = job.o.gate;  // the stitched modules carry the pins already
  co.reps = search::timing_reps(co.reps, job.cost.model_run_s * 1e3);  // a 192 ms model: 10 repetitions, not 50
  // A kernel accepted on rounding-level differences only makes the float64 rule decide the model too.
  auto fp64_rule_only = [&] {
    for (const search::KernelOutcome& k : job.outcomes)
      if (k.chosen && k.candidates[*k.chosen].result && verify::passed_on_rounding(*k.candidates[*k.chosen].result))
        return true;
    for (const search::RegionOutcome& r : job.regions)
      if (r.chosen && verify::passed_on_rounding(r.tried[*r.chosen].result.cascade)) return true;
    return false;
  };
  co.fp64_rule_only = fp64_rule_only();
  job.e2e = verify::end_to_end(*job.sup, *job.bundle, job.stitched, co);
  auto passed = [&] { return verify::lets_through(job.e2e->status); };
  // A fused region failing the model's gate falls back to its kernels' per-kernel results first.
  bool fused = std::any_of(job.regions.begin(), job.regions.end(), [](const auto& r) { return r.chosen.has_value(); });
  if (!passed() && fused) {
    std::string why = job.e2e->evidence.value("reason", "no reason recorded");
    for (search::RegionOutcome& r : job.regions)
      if (r.chosen)
        search::drop_region(r, job.outcomes,
                            fmt::format("accepted alone, left out of the result: the model with it failed the "
                                        "end-to-end gate ({}); its kernels keep their per-kernel results", why));
    job.say(fmt::format("end-to-end gate failed ({}); again without the fused regions", why));
    stitch_modules(job);
    if (!job.changed) {
      job.fallback_note = fmt::format("the re-stitched model failed its end-to-end gate ({}); the result is the "
                                      "baseline unchanged", why);
      return;
    }
    co.fp64_rule_only = fp64_rule_only();
    job.e2e = verify::end_to_end(*job.sup, *job.bundle, job.stitched, co);
  }
  // Each kernel passed every gate alone; together they did not. Rather than drop every win, leave
  // out the kernel expected to save least and ask again, a few times (each ask is one gate run).
  for (int retry = 0; !passed() && retry < kE2eRetries; ++retry) {
    std::optional<size_t> drop = search::least_saving_accepted(job.outcomes);
    if (!drop) break;
    search::KernelOutcome& k = job.outcomes[*drop];
    std::string why = job.e2e->evidence.value("reason", "no reason recorded");
    k.note = fmt::format("accepted alone ({}), left out of the result: the model with it failed the end-to-end "
                         "gate ({})", k.candidates[*k.chosen].candidate.id, why);
    k.chosen.reset(), k.speedup.reset();
    job.say(fmt::format("end-to-end gate failed ({}); again without {}", why, k.profile.kernel->name));
    stitch_modules(job);
    co.fp64_rule_only = fp64_rule_only();
    job.e2e = verify::end_to_end(*job.sup, *job.bundle, job.stitched, co);
  }
  bool ok = passed();
  if (!ok) {
    // The kernels passed alone but the model as a whole did not: keep the compiler's modules.
    job.fallback_note = fmt::format("the re-stitched model failed its end-to-end gate ({}); the result is the "
                                    "baseline unchanged", job.e2e->evidence.value("reason", "no reason recorded"));
    job.say(job.fallback_note);
    job.changed = false;
  }
}

void write(Job& job) {
  fs::create_directories(job.out / "baseline");
  auto copy = [&](const fs::path& from, const fs::path& to) {
    std::error_code ec;
    if (fs::equivalent(from, to, ec)) return;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) throw UserError(fmt::format("{}: cannot write ({}); check --out", to.string(), ec.message()));
  };
  fs::path b(job.bundle_dir);
  copy(b / "meta.json", job.out / "meta.json");
  copy(b / job.bundle->meta.value("problem", "problem.py"), job.out / job.bundle->meta.value("problem", "problem.py"));
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g) {
    std::string name = job.bundle->meta["graphs"][g]["module"];
    copy(b / name, job.out / "baseline" / name);
    fs::path dst = job.out / name;
    std::ofstream f(dst, std::ios::binary | std::ios::trunc);
    // A fallback writes the baseline module itself: the result is always loadable.
    const std::string& text = job.changed ? job.stitched[g] : job.bundle->graphs[g]->module->source();
    f << text;
    if (!f) throw UserError(fmt::format("{}: cannot write; check --out", dst.string()));
  }
}

}  // namespace kopt::pipeline
