// The main job's stages from load to plan (pipeline/stages.h): the bundle (captured first when given a
// problem), the workers, the GPU's ceilings, the baseline checked against eager, the kernels' launches,
// the profile, and the profiler's ranking of the kernels.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "pipeline/capture.h"
#include "pipeline/stages.h"
#include "pipeline/workers.h"
#include "profile/family.h"
#include "util/error.h"
#include "util/split.h"
#include "worker/client.h"
#include "worker/memory.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

void load(Job& job) {
  const OptimizeOptions& o = job.o;
  fs::path target(o.target);
  if (ir::is_bundle_dir(o.target)) {
    job.bundle_dir = o.target;
  } else if (fs::is_regular_file(target) && target.extension() == ".py") {
    // A kernel file is captured by running its own kernels; an nn.Module by torch.compile, which in CPU
    // mode writes Triton kernels for CPU tensors that the interpreter runs (--cpu-kernels triton).
    bool kernel_file = is_kernel_file(o.target);
    fs::path dir = job.out / "bundle";
    job.say(fmt::format("capturing {} {} into {}", o.target,
                        kernel_file   ? "(a kernel file)"
                        : job.gpu()   ? "with torch.compile"
                                      : "with torch.compile (Triton kernels for CPU tensors, run by the interpreter)",
                        dir.string()));
    CaptureOptions c;
    c.problem = o.target, c.out = dir.string(), c.mode = o.mode, c.dtype = o.dtype, c.force = true;
    c.timeout_s = static_cast<int>(o.gate.timeout.count());
    set_job_device(c, job.gpu() ? "cuda" : "cpu");
    std::vector<std::string> gpus = split_list(o.gpus);
    c.gpu = !job.gpu() || gpus.empty() ? "" : gpus.front();
    auto t0 = std::chrono::steady_clock::now();
    auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    if (job.sup && capture_in_worker() && !kernel_file) {
      // In the pool's worker (docs/bench.md): torch, CUDA and Inductor's compile pool are up there already.
      json req = {{"problem", c.problem}, {"out", c.out}, {"mode", c.mode}, {"force", true}};
      if (!c.dtype.empty()) req["dtype"] = c.dtype;
      worker::Reply r = worker::capture(*job.sup, req, std::chrono::seconds(c.timeout_s > 0 ? c.timeout_s : 3600));
      if (!r.ok)
        throw UserError(
            fmt::format("capturing {} failed: {}", o.target, r.raw.value("error", std::string("no reason"))));
      job.say(fmt::format("captured in the worker: {:.1f} s (its own clock {:.1f} s)", since(),
                          r.raw.value("capture_seconds", 0.0)));
    } else {
      std::string error_line;
      if (int rc = capture_and_wait(c, &error_line); rc != 0)
        throw UserError(error_line.empty() ? fmt::format("capturing {} failed (exit {})", o.target, rc)
                                           : fmt::format("capturing {} failed: {}", o.target, error_line));
      // The capture's own line times it from its start inside Python; this is the process's whole life
      // (interpreter start, imports, exit): on the H100 a 12.7 s capture left the job's load stage at 26.5 s.
      job.say(fmt::format("capture process: {:.1f} s from start to exit", since()));
    }
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

void ceilings(Job& job, results::ResultsDb& db) {
  if (!job.gpu()) return;
  job.ceilings = gpu_ceilings(*job.sup, db, job.timeout(), [&](const std::string& w) { job.say(w); });
}

void baseline(Job& job) {
  if (!job.skip.empty()) return;
  // The job's peak device memory counts from here: the ceilings' 2 GiB copy before it is not the model's.
  worker::read_memory(*job.sup, true);
  job.say("running the baseline module against the eager model");
  worker::RunBaselineReply base = must(worker::run_baseline(*job.sup, job.bundle_dir, job.timeout()),
                                       "the baseline run");
  job.baseline = base.raw;
  if (const json& sec = base.seconds; sec.is_object()) {
    // Where the baseline's time went (the worker's split): loading the bundle, the three model runs.
    std::vector<std::string> parts;
    for (const auto& [name, v] : sec.items())
      if (v.is_number()) parts.push_back(fmt::format("{} {:.1f} s", name, v.get<double>()));
    job.say(fmt::format("baseline: {}", fmt::join(parts, ", ")));
    // A real run of this bundle: what the budget's estimates start from from now on (search/cost.h). On a GPU
    // this first run includes compiling and autotuning; the profile's timed module run stands there instead.
    // In the interpreter the first run also pays one-time costs (a Helion kernel file's add_relu: 2.1 s, its
    // recorded run 0.2 s, a cascade 3.2 s, estimated at 164 s from the first): the recorded run, a warm run
    // plus its recording, bounds a run from above when it is the shorter.
    if (!job.gpu() && sec.contains("baseline_run") && sec["baseline_run"].is_number()) {
      double first = sec["baseline_run"].get<double>(), recorded = sec.value("recorded_run", 0.0);
      job.cost.model_run_s = recorded > 0 ? std::min(first, recorded) : first;
    }
  }
  if (!base.match) {
    // Vendor kernels may differ from eager (TF32 convolutions); the float64 model decides whether the
    // baseline is still as accurate as its precision allows. G3 compares candidates with the same rule.
    // On a GPU a float64 model that would run on the host (its need past the memory plan's soft target) is left
    // to G3, which makes it only for a candidate outside the baseline's tolerance: on the host it took 15.6 s of
    // a 60 s budget (a bf16 cumsum over 524288 x 3527, H100, session 38), and G3 needed it for no candidate.
    worker::RunFp64Reply fp64 = must(worker::run_fp64(*job.sup, job.bundle_dir, job.timeout(), job.gpu()),
                                     "the float64 run");
    if (!fp64.deferred.empty()) {
      job.baseline["vs_fp64"] = {{"deferred", fp64.deferred}};
      job.say("the float64 reference is left to G3: " + fp64.deferred);
    } else {
      job.baseline["vs_fp64"] = fp64.baseline_vs_fp64;
    }
  }
}

void record_launches(Job& job) {
  if (!job.skip.empty()) return;
  worker::RecordLaunchesReply r = must(worker::record_launches(*job.sup, job.bundle_dir, job.timeout()),
                                       "recording the kernels' launches");
  for (const json& l : r.launches) job.launches[l.value("name", "")].push_back(l);
  job.pins = stitch::pins_of(r.launches);
}

void profile(Job& job) {
  if (!job.gpu() || !job.skip.empty()) return;
  job.say("profiling the baseline module");
  job.profile = must(worker::profile(*job.sup, {.bundle = job.bundle_dir, .reps = 20}, job.timeout()),
                     "profiling");
  if (const nlohmann::json& m = job.profile.raw.value("module", nlohmann::json()); m.is_object())
    job.cost.model_run_s = m.value("median_ms", 0.0) / 1e3;
}

void plan(Job& job, agents::Agents& agents) {
  if (!job.skip.empty()) return;
  std::map<std::string, worker::KernelTime> timed;
  for (const worker::KernelTime& k : job.profile.kernels) timed[k.name] = k;
  std::vector<agents::KernelProfile> kernels;
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g)
    for (const ir::Kernel& k : job.bundle->graphs[g]->kernels) {
      agents::KernelProfile p;
      p.kernel = &k;
      p.graph = g;
      p.family = profile::family(k);
      p.launches = job.launches[k.name];
      if (auto it = timed.find(k.name); it != timed.end()) {
        p.time_ms = it->second.ms_per_run;
        p.calls_per_run = it->second.calls_per_run;
      } else {
        p.calls_per_run = static_cast<double>(p.launches.size());
      }
      kernels.push_back(std::move(p));
    }
  std::optional<json> c;
  if (!job.ceilings.is_null()) c = job.ceilings;
  job.ranked = agents.profiler->rank(std::move(kernels), c);
}

}  // namespace kopt::pipeline
