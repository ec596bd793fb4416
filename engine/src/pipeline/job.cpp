// The main job (pipeline/job.h): its stages (pipeline/stages.h) run in order, each timed; then the
// reports, and the job's record in the results database.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "llm/config.h"
#include "llm/session.h"
#include "pipeline/capture.h"
#include "pipeline/job.h"
#include "pipeline/llm_report.h"
#include "pipeline/optimize_report.h"
#include "pipeline/stages.h"
#include "report/report.h"
#include "util/error.h"
#include "worker/memory.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// While the job runs, a step silent for half a minute (one worker request of the interpreter can take
// minutes) gets a line saying it is still at work, so that a log never stops without a word.
class Heartbeat {
 public:
  explicit Heartbeat(const Job& job) : job_(job), thread_([this] { loop(); }) {}
  ~Heartbeat() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return done_; })) {
      double quiet = 0, since = 0;
      std::string last;
      {
        std::lock_guard l(job_.say_mu);
        quiet = std::chrono::duration<double>(Clock::now() - job_.last_line).count();
        since = std::chrono::duration<double>(Clock::now() - job_.last_said).count();
        last = job_.last_text;
      }
      if (quiet >= kSilence)
        job_.say(fmt::format("still working, {:.0f} s since: {}", since, last.substr(0, 120)), true);
    }
  }
  static constexpr double kSilence = 30;
  const Job& job_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Runs one stage and adds its name and seconds to the report's `stages`.
template <class F>
void stage(Job& job, const std::string& name, F&& body) {
  auto t = Clock::now();
  body();
  double s = std::chrono::duration<double>(Clock::now() - t).count();
  job.stages.push_back({{"name", name}, {"seconds", s}});
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

json run_optimize(const OptimizeOptions& o, results::ResultsDb& db, worker::Supervisor* pool) {
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
  if (pool && capture_in_worker()) start(job, pool);  // the pool's worker captures the problem (load)
  try {
    stage(job, "load", [&] { load(job); });
  } catch (...) {
    if (workers.valid()) workers.wait();  // the workers' thread writes into job: let it finish first
    throw;
  }
  Heartbeat heartbeat(job);
  // From here (the bundle known) the job can always write a report: an interrupt stops the workers and the job
  // writes what it has.
  worker::catch_interrupts(true);
  struct Uncatch {
    ~Uncatch() { worker::catch_interrupts(false); }
  } uncatch;
  auto run = [&](const std::string& name, auto&& body) {
    if (worker::interrupted()) return;
    job.interrupted_in = name;
    stage(job, name, body);
  };
  try {
    run("workers", [&] {
      if (overlap) workers.get();
      else if (!job.sup) start(job, pool);
    });
    run("ceilings", [&] { ceilings(job, db); });
    // The budget runs from here: the workers' start, a capture and the GPU's ceilings (measured once per GPU)
    // are not counted.
    job.budget_end = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.budget_s * 1000));
    check_budget(job);
    run("baseline", [&] { baseline(job); });
    run("launches", [&] { record_launches(job); });
    run("profile", [&] { profile(job); });
    run("plan", [&] { plan(job, agents); });
    run("search", [&] { search(job, agents, db); });
    run("regions", [&] { regions(job, agents, db); });
    run("stitch", [&] { stitch_modules(job); });
    run("end_to_end", [&] { end_to_end(job); });
  } catch (...) {
    if (!worker::interrupted()) throw;  // a request failed because the workers were stopped under it
  }
  job.interrupted = worker::interrupted();
  if (job.interrupted) {
    // What was decided stands; what was not is said, and nothing unverified goes into the result.
    job.not_tried.push_back(fmt::format("interrupted ({}) during the {} stage: the stages after it did not run",
                                        worker::signal_name(job.interrupted), job.interrupted_in));
    job.fallback_note = fmt::format("interrupted ({}) during the {} stage: a partial report",
                                    worker::signal_name(job.interrupted), job.interrupted_in);
    if (job.changed && !job.e2e) {
      job.fallback_note += "; the kernels accepted alone are left out (the end-to-end gate did not run) and the result "
                           "is the baseline unchanged";
      job.changed = false;
    }
  }
  if (!job.skip.empty()) job.fallback_note = job.skip;
  for (const search::KernelOutcome& k : job.outcomes)  // kernels the budget let no cascade start on
    if (k.profile.kernel && k.note.rfind("not tried", 0) == 0)
      job.not_tried.push_back(fmt::format("{}: {}", k.profile.kernel->name, k.note));
  add_unsearched(job, job.interrupted ? "not searched: the job was interrupted first"
                      : !job.skip.empty()  ? "not searched: " + job.skip
                                           : "not searched");
  heartbeat.stop();
  json report;
  stage(job, "write", [&] {
    // Read before the reports: a worker that does not answer leaves the figure "not measured".
    job.memory = job.interrupted ? json(nullptr)
                                 : worker::memory_summary(worker::read_memory(*job.sup, false),
                                                          worker::compiled_peak_of(job.baseline));
    write(job);
    report = build_report({job.o, job.out, job.bundle_dir, *job.bundle, job.hello, job.ceilings, job.baseline,
                           job.profile.raw, job.outcomes, job.regions, job.e2e, job.changed, job.fallback_note, job.stages,
                           std::chrono::duration<double>(Clock::now() - job.t0).count(), job.memory});
    report["agents"] = agents.name;
    report["not_tried"] = job.not_tried;
    report["interrupted"] = job.interrupted ? json{{"signal", worker::signal_name(job.interrupted)},
                                                   {"stage", job.interrupted_in}}
                                            : json(nullptr);
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
  if (job.interrupted)
    throw worker::Interrupted(job.interrupted,
                              fmt::format("interrupted ({}) during the {} stage; the partial report is in {}",
                                          worker::signal_name(job.interrupted), job.interrupted_in,
                                          (job.out / "report.md").string()));
  db.add_record("optimize", job.bundle_dir, report);
  return report;
}

}  // namespace kopt::pipeline
