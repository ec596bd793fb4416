// `kernelopt optimize PROBLEM.py|BUNDLE`: the main job, as a straight list of
// named, timed stages, each followed by its invariant check — load (capture
// first when given a problem), workers, ceilings, baseline, launches, profile,
// plan, search, stitch, end_to_end, write. A kernel whose candidates all fail
// keeps the compiler's kernel; if the stitched model fails its end-to-end gate,
// the whole result falls back to the baseline modules. Whatever happens, DIR
// holds a loadable result and a report saying what was done and why.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "agents/agent.h"
#include "artifact/bundle.h"
#include "cli/commands.h"
#include "util/split.h"
#include "cli/llm_report.h"
#include "cli/optimize_report.h"
#include "profile/family.h"
#include "report/report.h"
#include "report/results_db.h"
#include "llm/config.h"
#include "llm/session.h"
#include "search/search.h"
#include "stitch/stitch.h"
#include "util/error.h"
#include "verify/end_to_end.h"
#include "worker/memory.h"

namespace kopt::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Job {
  explicit Job(const OptimizeOptions& opts) : o(opts) {}
  const OptimizeOptions& o;
  fs::path out;
  std::string bundle_dir;
  std::unique_ptr<ir::Bundle> bundle;
  std::unique_ptr<worker::Supervisor> owned;  // the job's own workers, unless given a pool (bench)
  worker::Supervisor* sup = nullptr;
  json hello, ceilings, baseline, profile;
  json memory;  // report.json's "memory": peak device memory over the job (docs/report.md)
  std::map<std::string, std::vector<json>> launches;  // kernel name -> launch records
  stitch::Pins pins;  // kernel name -> the config the baseline's autotuner settled on (GPU)
  std::vector<agents::KernelProfile> ranked;
  std::vector<search::KernelOutcome> outcomes;
  std::vector<std::string> stitched;  // one module text per graph
  std::optional<verify::GateRecord> e2e;
  bool changed = false;
  std::string fallback_note;
  json stages = json::array();
  Clock::time_point t0 = Clock::now();

  bool gpu() const { return o.device != "cpu"; }
  std::chrono::seconds timeout() const { return o.gate.timeout; }
  // Plain lines carry the seconds since the job began, so a log shows where a slow job spent its time.
  void say(const std::string& what) const {
    if (!o.quiet)
      std::cerr << fmt::format("[kernelopt {:.1f}s] {}\n", std::chrono::duration<double>(Clock::now() - t0).count(),
                               what);
  }
};

template <class F>
void stage(Job& job, const std::string& name, F&& body) {
  auto t = Clock::now();
  body();
  double s = std::chrono::duration<double>(Clock::now() - t).count();
  job.stages.push_back({{"name", name}, {"seconds", s}});
}

}  // namespace

bool is_kernel_file(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !std::regex_search(text, std::regex(R"((^|\n)(class Model\b|from \S+ import .*\bModel\b|Model\s*=))"));
}

namespace {

void load(Job& job) {
  const OptimizeOptions& o = job.o;
  fs::path target(o.target);
  if (ir::is_bundle_dir(o.target)) {
    job.bundle_dir = o.target;
  } else if (fs::is_regular_file(target) && target.extension() == ".py") {
    // A kernel file is captured by running its own kernels, which the interpreter can do in CPU mode;
    // an nn.Module needs Inductor on a GPU.
    bool kernel_file = is_kernel_file(o.target);
    if (!job.gpu() && !kernel_file)
      throw UserError(fmt::format("{}: a problem file is captured with torch.compile on a GPU; in CPU mode pass a "
                                  "bundle captured on a GPU (kernelopt capture on a GPU machine)",
                                  o.target));
    fs::path dir = job.out / "bundle";
    job.say(fmt::format("capturing {} {} into {}", o.target, kernel_file ? "(a kernel file)" : "with torch.compile",
                        dir.string()));
    CaptureOptions c;
    c.problem = o.target, c.out = dir.string(), c.mode = o.mode, c.device = job.gpu() ? "cuda" : "cpu",
    c.dtype = o.dtype, c.force = true, c.timeout_s = static_cast<int>(o.gate.timeout.count());
    std::vector<std::string> gpus = split_list(o.gpus);
    c.gpu = !job.gpu() || gpus.empty() ? "" : gpus.front();
    std::string error_line;
    if (int rc = capture_and_wait(c, &error_line); rc != 0)
      throw UserError(error_line.empty() ? fmt::format("capturing {} failed (exit {})", o.target, rc)
                                         : fmt::format("capturing {} failed: {}", o.target, error_line));
    job.bundle_dir = dir.string();
  } else if (!fs::exists(target)) {
    throw UserError(fmt::format("{}: no such file or directory; pass a problem .py file or a bundle directory", o.target));
  } else {
    throw UserError(fmt::format("{}: neither a bundle directory (with meta.json) nor a problem .py file", o.target));
  }
  job.bundle = ir::load_bundle(job.bundle_dir);
}

void start(Job& job, worker::Supervisor* pool) {
  if (pool) {
    job.sup = pool;
    job.hello = pool->hellos().at(0);
    return;
  }
  std::vector<std::string> gpus = split_list(job.o.gpus);
  if (gpus.empty()) throw UserError("--gpus: give at least one GPU index, e.g. --gpus 0 or --gpus 0,1");
  job.say(job.gpu() ? fmt::format("starting {} worker(s) on GPU {}", gpus.size(), job.o.gpus)
                    : "starting a CPU worker (Triton interpreter; no performance is measured)");
  job.owned = start_workers(job.o.device, gpus);
  job.sup = job.owned.get();
  job.hello = job.sup->hellos().at(0);
}

void ceilings(Job& job, report::ResultsDb& db) {
  if (!job.gpu()) return;
  job.ceilings = gpu_ceilings(*job.sup, db, job.timeout(), [&](const std::string& w) { job.say(w); });
}

void baseline(Job& job) {
  // The job's peak device memory counts from here: the ceilings' 2 GiB copy before it is not the model's.
  worker::read_memory(*job.sup, true);
  job.say("running the baseline module against the eager model");
  job.baseline = must(job.sup->call({{"op", "run_baseline"}, {"bundle", job.bundle_dir}}, job.timeout()),
                      "the baseline run");
  if (const json& sec = job.baseline.value("seconds", json()); sec.is_object()) {
    // Where the baseline's time went (the worker's split): loading the bundle, the three model runs.
    std::vector<std::string> parts;
    for (const auto& [name, v] : sec.items())
      if (v.is_number()) parts.push_back(fmt::format("{} {:.1f} s", name, v.get<double>()));
    job.say(fmt::format("baseline: {}", fmt::join(parts, ", ")));
  }
  if (!job.baseline["match"].get<bool>()) {
    // Vendor kernels may differ from eager (TF32 convolutions); the float64 model decides whether the
    // baseline is still as accurate as its precision allows. G3 compares candidates with the same rule.
    json fp64 = must(job.sup->call({{"op", "run_fp64"}, {"bundle", job.bundle_dir}}, job.timeout()), "the float64 run");
    job.baseline["vs_fp64"] = fp64["baseline_vs_fp64"];
  }
}

void record_launches(Job& job) {
  json r = must(job.sup->call({{"op", "record_launches"}, {"bundle", job.bundle_dir}}, job.timeout()),
                "recording the kernels' launches");
  for (const json& l : r["launches"]) job.launches[l.value("name", "")].push_back(l);
  job.pins = stitch::pins_of(r["launches"]);
}

void profile(Job& job) {
  if (!job.gpu()) return;
  job.say("profiling the baseline module");
  job.profile = must(job.sup->call({{"op", "profile"}, {"bundle", job.bundle_dir}, {"reps", 20}}, job.timeout()),
                     "profiling");
}

void plan(Job& job, agents::Agents& agents) {
  std::map<std::string, json> timed;
  if (job.profile.is_object())
    for (const json& k : job.profile.value("kernels", json::array())) timed[k.value("name", "")] = k;
  std::vector<agents::KernelProfile> kernels;
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g)
    for (const ir::Kernel& k : job.bundle->graphs[g]->kernels) {
      agents::KernelProfile p;
      p.kernel = &k;
      p.graph = g;
      p.family = profile::family(k);
      p.launches = job.launches[k.name];
      if (auto it = timed.find(k.name); it != timed.end()) {
        p.time_ms = it->second.value("ms_per_run", 0.0);
        p.calls_per_run = it->second.value("calls_per_run", 0.0);
      } else {
        p.calls_per_run = static_cast<double>(p.launches.size());
      }
      kernels.push_back(std::move(p));
    }
  std::optional<json> c;
  if (!job.ceilings.is_null()) c = job.ceilings;
  job.ranked = agents.profiler->rank(std::move(kernels), c);
}

void search(Job& job, agents::Agents& agents, report::ResultsDb& db) {
  search::SearchOptions so;
  so.gpu = job.gpu();
  so.max_cascades = job.o.max_cascades >= 0 ? static_cast<size_t>(job.o.max_cascades) : (job.gpu() ? 3 : 1);
  so.deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(job.o.budget_s * 1000));
  so.cascade = job.o.gate;
  so.cascade.pins = job.pins;
  so.cache_prefix = job.gpu() ? fmt::format("{}|{}|{}", job.hello["gpu"].value("name", "?"),
                                            job.hello["versions"].value("torch", "?"),
                                            job.hello["versions"].value("triton", "?"))
                              : fmt::format("cpu|{}|{}", job.hello["versions"].value("torch", "?"),
                                            job.hello["versions"].value("triton", "?"));
  // A cached verdict holds only for the same gates: seeds, gamma and tolerances are part of the key.
  so.cache_prefix += fmt::format("|seeds={}|gamma={}|tol={}", so.cascade.seeds, so.cascade.gamma,
                                 so.cascade.tol.to_json().dump());
  // G3 with the kept kernels pinned is another gate than G3 with them autotuning again; the pins'
  // values are not in the key (each worker autotunes afresh), the end-to-end gate checks the final module.
  if (!so.cascade.pins.empty()) so.cache_prefix += "|pinned";
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
      job.outcomes[i] = search::search_kernel(*job.sup, *job.bundle, agents, job.ranked[i], so, cache, progress);
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

void stitch_modules(Job& job) {
  job.stitched.clear();
  job.changed = false;
  std::vector<std::vector<stitch::Replacement>> reps(job.bundle->graphs.size());
  for (const search::KernelOutcome& k : job.outcomes)
    if (k.chosen)
      reps[k.profile.graph].push_back(
          {k.profile.kernel->name, k.candidates[*k.chosen].candidate.source, k.candidates[*k.chosen].candidate.id});
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g) {
    job.stitched.push_back(stitch::stitch(*job.bundle->graphs[g], reps[g], job.pins));
    job.changed = job.changed || !reps[g].empty();
  }
}

// End-to-end gate runs after the first that leave out one more kernel (docs/optimize.md).
constexpr int kE2eRetries = 2;

void end_to_end(Job& job) {
  if (!job.changed) return;
  job.say("end-to-end gate: the re-stitched model against the baseline");
  verify::CascadeOptions co = job.o.gate;  // the stitched modules carry the pins already
  // A kernel accepted on rounding-level differences only makes the float64 rule decide the model too.
  auto fp64_rule_only = [&] {
    for (const search::KernelOutcome& k : job.outcomes)
      if (k.chosen && k.candidates[*k.chosen].result && verify::passed_on_rounding(*k.candidates[*k.chosen].result))
        return true;
    return false;
  };
  co.fp64_rule_only = fp64_rule_only();
  job.e2e = verify::end_to_end(*job.sup, *job.bundle, job.stitched, co);
  auto passed = [&] { return job.e2e->status == "passed" || job.e2e->status == "not_measured"; };
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

}  // namespace

PlannedBundle plan_bundle(const OptimizeOptions& o, agents::Agents& agents) {
  Job job{o};
  load(job);
  start(job, nullptr);
  record_launches(job);
  plan(job, agents);
  return {std::move(job.bundle), std::move(job.owned), std::move(job.ranked)};
}

json run_optimize(const OptimizeOptions& o, report::ResultsDb& db, worker::Supervisor* pool) {
  if (o.device != "cuda" && o.device != "cpu") throw UserError("--device " + o.device + ": use cuda or cpu");
  if (o.budget_s <= 0) throw UserError("--budget must be a positive number of seconds");
  // The LLM config is read unless the built-in agents were asked for by name: with no --agents,
  // a configured endpoint makes the run hybrid.
  llm::Config llm_config;
  if (o.agents != "builtin") llm_config = llm::load_config(o.config);
  agents::Agents agents = agents::make_agents(o.agents, &llm_config);
  Job job{o};
  fs::path target(o.target);
  job.out = !o.out.empty() ? fs::path(o.out)
                           : fs::path(target.filename().string().empty() ? target.parent_path().filename() : target.stem())
                                 .concat(".kernelopt");

  // A problem file is captured in a process of its own (torch.compile, tens of seconds on a GPU): the
  // workers start meanwhile, so the "workers" stage is only what is left to wait for after the capture.
  bool overlap = !pool && job.gpu() && !ir::is_bundle_dir(o.target) && target.extension() == ".py";
  std::future<void> workers;
  if (overlap) workers = std::async(std::launch::async, [&] { start(job, pool); });
  try {
    stage(job, "load", [&] { load(job); });
  } catch (...) {
    if (workers.valid()) workers.wait();  // the workers' thread writes into job: let it finish first
    throw;
  }
  stage(job, "workers", [&] { overlap ? workers.get() : start(job, pool); });
  stage(job, "ceilings", [&] { ceilings(job, db); });
  stage(job, "baseline", [&] { baseline(job); });
  stage(job, "launches", [&] { record_launches(job); });
  stage(job, "profile", [&] { profile(job); });
  stage(job, "plan", [&] { plan(job, agents); });
  stage(job, "search", [&] { search(job, agents, db); });
  stage(job, "stitch", [&] { stitch_modules(job); });
  stage(job, "end_to_end", [&] { end_to_end(job); });
  json report;
  stage(job, "write", [&] {
    // Read before the reports: a worker that does not answer leaves the figure "not measured".
    job.memory = worker::memory_summary(worker::read_memory(*job.sup, false), worker::compiled_peak_of(job.baseline));
    write(job);
    report = build_report({job.o, job.out, job.bundle_dir, *job.bundle, job.hello, job.ceilings, job.baseline,
                           job.profile, job.outcomes, job.e2e, job.changed, job.fallback_note, job.stages,
                           std::chrono::duration<double>(Clock::now() - job.t0).count(), job.memory});
    report["agents"] = agents.name;
    if (agents.llm) {
      // Every exchange with the LLM, kept with the run (prompts and replies; never the key).
      const std::string name = "transcripts.jsonl";
      std::ofstream t(job.out / name, std::ios::binary | std::ios::trunc);
      t << agents.llm->jsonl();
      if (!t) throw UserError(fmt::format("{}: cannot write; check --out", (job.out / name).string()));
      report["llm"] = llm_summary(*agents.llm, job.outcomes, name);
    }
    report::write_reports(report, job.out);
  });
  db.add_record("optimize", job.bundle_dir, report);
  return report;
}

int optimize(const OptimizeOptions& o) {
  report::ResultsDb db(o.db.empty() ? report::ResultsDb::default_path() : o.db);
  json report = run_optimize(o, db);
  if (o.json) std::cout << report.dump(2) << "\n";
  else print_summary(report);
  return 0;
}

}  // namespace kopt::cli
