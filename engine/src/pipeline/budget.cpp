// The job's budget before the baseline (pipeline/stages.h): in CPU mode, whether the bundle can finish in
// Triton's interpreter inside --budget at all, estimated from its sizes (search/cost.h) and said up front with
// what to do; and the kernels a search never reached, listed with the reason in the report.
#include <cmath>

#include <fmt/format.h>

#include "pipeline/stages.h"
#include "profile/family.h"

namespace kopt::pipeline {

void check_budget(Job& job) {
  job.cost.gpu = job.gpu();
  job.cost.model_elements = search::model_elements(*job.bundle);
  job.cost.seeds = job.o.gate.seeds;
  job.cost.reps = job.o.gate.reps;
  if (job.gpu() || job.cost.model_elements <= 0) return;  // a GPU's runs take milliseconds; unknown sizes: try
  const double run_s = job.cost.model_elements * search::kInterpreterSecondsPerElement;
  const double baseline_s = search::kBaselineModelRuns * run_s;
  double cascade_s = 0;  // the cheapest kernel's cascade: if even that does not fit, no candidate will be verified
  for (const auto& g : job.bundle->graphs)
    for (const ir::Kernel& k : g->kernels) {
      double c = search::cascade_seconds(job.cost, search::kernel_elements(*g, k), std::nullopt);
      cascade_s = cascade_s == 0 ? c : std::min(cascade_s, c);
    }
  const double need = baseline_s + cascade_s + search::kEndToEndModelRuns * run_s;
  const double left = job.left_s();
  if (need <= left) return;
  const std::string sizes =
      fmt::format("one model run iterates {:.3g} elements, about {} in the interpreter", job.cost.model_elements,
                  search::seconds_text(run_s));
  const std::string fix = fmt::format("use a smaller problem, a GPU (--device cuda), or --budget {:.0f} or more",
                                      std::ceil((need + (job.o.budget_s - left)) / 10) * 10);
  if (baseline_s > left) {
    job.skip = fmt::format("{} is too large for the interpreter in a {:g} s budget: {}, and the baseline alone "
                           "needs about {} of them ({}); not run: the baseline, the search and the end-to-end gate",
                           job.bundle_dir, job.o.budget_s, sizes, search::kBaselineModelRuns,
                           search::seconds_text(baseline_s));
    job.not_tried.push_back(job.skip + "; " + fix);
    std::cerr << fmt::format("kernelopt: {}; {}\n", job.skip, fix);
    return;
  }
  // The baseline fits; a candidate's cascade will not: the job runs, and verifies nothing.
  std::cerr << fmt::format("kernelopt: {} will verify no candidate in a {:g} s budget: {}, the baseline needs about "
                           "{} and a cascade about {} more; {}\n",
                           job.bundle_dir, job.o.budget_s, sizes, search::seconds_text(baseline_s),
                           search::seconds_text(cascade_s), fix);
}

void add_unsearched(Job& job, const std::string& why) {
  // The search stage sized outcomes to the ranked kernels; a slot it never reached has no kernel yet.
  std::vector<search::KernelOutcome> kept;
  for (auto& k : job.outcomes)
    if (k.profile.kernel) kept.push_back(std::move(k));
  auto searched = [&](const ir::Kernel* k) {
    for (const auto& o : kept)
      if (o.profile.kernel == k) return true;
    return false;
  };
  for (size_t g = 0; g < job.bundle->graphs.size(); ++g)
    for (const ir::Kernel& k : job.bundle->graphs[g]->kernels) {
      if (searched(&k)) continue;
      search::KernelOutcome o;
      for (const auto& r : job.ranked)
        if (r.kernel == &k) o.profile = r;
      if (!o.profile.kernel) {
        o.profile.kernel = &k, o.profile.graph = g, o.profile.family = profile::family(k);
        o.profile.calls_per_run = static_cast<double>(k.launch_count);
      }
      o.note = why;
      kept.push_back(std::move(o));
    }
  job.outcomes = std::move(kept);
}

}  // namespace kopt::pipeline
