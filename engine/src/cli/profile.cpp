// `kernelopt profile BUNDLE`: start a worker, check the baseline module against
// the eager model, and (on a GPU) show where the module's device time goes,
// kernel by kernel, Triton against vendor. Ceilings are measured once per GPU
// model and software versions and cached in the results database.
#include <iostream>
#include <memory>
#include <map>

#include <fmt/format.h>

#include "artifact/bundle.h"
#include "cli/commands.h"
#include "pipeline/workers.h"
#include "results/db.h"
#include "util/error.h"
#include "worker/client.h"

namespace kopt::cli {

namespace {

void progress(bool quiet, const std::string& what) {
  if (!quiet) std::cerr << "[kernelopt] " << what << "\n";
}

}  // namespace

int profile(const ProfileOptions& o) {
  auto bundle = ir::load_bundle(o.bundle);  // check the bundle before starting anything
  std::map<std::string, std::string> kind_of;
  for (const auto& g : bundle->graphs)
    for (const auto& k : g->kernels) kind_of[k.name] = k.kind;

  progress(o.quiet, fmt::format("starting a worker ({})", o.device == "cpu" ? "cpu" : "GPU " + o.gpu));
  std::unique_ptr<worker::Supervisor> owner = pipeline::start_worker(o.device, o.gpu);
  worker::Supervisor& sup = *owner;
  nlohmann::json hello = sup.hellos().at(0);
  const auto timeout = std::chrono::seconds(o.timeout_s);

  nlohmann::json out = {{"bundle", o.bundle}, {"worker", hello}};
  results::ResultsDb db(o.db.empty() ? results::ResultsDb::default_path() : o.db);
  if (o.device != "cpu") {
    out["ceilings"] = pipeline::gpu_ceilings(sup, db, timeout, [&](const std::string& w) { progress(o.quiet, w); });
  }
  progress(o.quiet, "running the baseline module against the eager model");
  worker::RunBaselineReply baseline = pipeline::must(worker::run_baseline(sup, o.bundle, timeout), "the baseline run");
  const nlohmann::json& base = baseline.raw;
  out["baseline"] = {{"match", baseline.match}, {"comparison", base["comparison"]}, {"launches", base["launches"]}};
  if (!baseline.match) {
    // Vendor kernels may pick other algorithms (TF32 convolutions, split-K GEMMs) than eager did:
    // the float64 model says whether the baseline is still as accurate as its precision allows.
    progress(o.quiet, "baseline differs from eager; comparing it with the model in float64");
    worker::RunFp64Reply fp64 = pipeline::must(worker::run_fp64(sup, o.bundle, timeout), "the float64 run");
    out["baseline"]["vs_fp64"] = fp64.baseline_vs_fp64;
  }
  progress(o.quiet, "profiling the module");
  nlohmann::json prof =
      pipeline::must(worker::profile(sup, {.bundle = o.bundle, .reps = o.reps}, timeout), "profiling").raw;
  prof.erase("id"), prof.erase("ok");
  out["profile"] = prof;
  db.add_record("profile", o.bundle, out);

  if (o.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  fmt::print("bundle {}: {} graph(s); worker on {} (torch {}, triton {})\n", o.bundle, bundle->graphs.size(),
             hello.contains("gpu") ? hello["gpu"].value("name", "?") : "cpu",
             hello["versions"].value("torch", "?"), hello["versions"].value("triton", "?"));
  double max_rel = 0;
  for (const auto& x : base["comparison"]["outputs"]) max_rel = std::max(max_rel, x.value("max_rel", 0.0));
  fmt::print("baseline module vs eager model: {} (max relative error {:.2e})\n",
             baseline.match ? "match" : "differs", max_rel);
  if (out["baseline"].contains("vs_fp64")) {
    double e64 = 0;
    for (const auto& x : out["baseline"]["vs_fp64"]["outputs"]) e64 = std::max(e64, x.value("max_rel", 0.0));
    fmt::print("baseline module vs the model in float64: max relative error {:.2e}\n", e64);
  }
  if (!prof.value("measured", false)) {
    fmt::print("times: not measured ({})\n", prof.value("reason", ""));
    return 0;
  }
  const auto& m = prof["module"];
  double sum = prof["kernel_sum_ms"], tri = prof["triton_ms"], ven = prof["vendor_ms"];
  fmt::print("module device time {:.4f} ms [p20 {:.4f}, p80 {:.4f}]; kernels {:.4f} ms = Triton {:.4f} ({:.0f}%) "
             "+ vendor {:.4f} ({:.0f}%)\n",
             m["median_ms"].get<double>(), m["p20_ms"].get<double>(), m["p80_ms"].get<double>(), sum, tri,
             sum > 0 ? 100 * tri / sum : 0, ven, sum > 0 ? 100 * ven / sum : 0);
  fmt::print("  {:<64} {:<22} {:>6} {:>10} {:>6}\n", "kernel", "kind", "calls", "ms/run", "share");
  for (const auto& k : prof["kernels"]) {
    std::string name = k["name"];
    std::string kind = k["triton"].get<bool>() ? (kind_of.count(name) ? kind_of[name] : "triton") : "vendor";
    double ms = k["ms_per_run"];
    fmt::print("  {:<64} {:<22} {:>6.0f} {:>10.4f} {:>5.1f}%\n", name.substr(0, 64), kind,
               k["calls_per_run"].get<double>(), ms, sum > 0 ? 100 * ms / sum : 0);
  }
  return 0;
}

}  // namespace kopt::cli
