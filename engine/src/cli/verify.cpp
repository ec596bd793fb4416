// `kernelopt verify BUNDLE --kernel NAME --candidate KERNEL.py`: the cascade on
// one candidate, then (if accepted) the end-to-end gate on the model with the
// candidate stitched in; each gate's outcome with its evidence; exit 0 only if
// accepted.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "pipeline/workers.h"
#include "results/db.h"
#include "results/record.h"
#include "stitch/stitch.h"
#include "util/error.h"
#include "verify/cascade.h"
#include "verify/end_to_end.h"
#include "worker/client.h"

namespace kopt::cli {

namespace {

using nlohmann::json;

std::string timing_summary(const json& e, const char* cand) {
  return fmt::format("{:.3f}x (baseline {:.4f} ms [p20 {:.4f}], {} {:.4f} ms [p80 {:.4f}], gamma {}){}",
                     e.value("speedup", 0.0), e["baseline"].value("median_ms", 0.0), e["baseline"].value("p20_ms", 0.0),
                     cand, e[cand].value("median_ms", 0.0), e[cand].value("p80_ms", 0.0), e.value("gamma", 0.0),
                     e.contains("reason") ? "; " + e["reason"].get<std::string>() : "");
}

std::string model_summary(const json& e) {
  if (e.contains("error")) return e["error"].get<std::string>().substr(0, 200);
  if (!e.contains("candidate_vs_fp64_max_rel"))  // within tolerance: the float64 model was not run
    return fmt::format("{}; vs baseline {:.2e}", e.value("rule", ""), e.value("vs_baseline_max_rel", 0.0));
  return fmt::format("{}; vs baseline {:.2e}, vs float64 {:.2e} (baseline {:.2e})", e.value("rule", ""),
                     e.value("vs_baseline_max_rel", 0.0), e.value("candidate_vs_fp64_max_rel", 0.0),
                     e.value("baseline_vs_fp64_max_rel", 0.0));
}

std::string gate_summary(const verify::GateRecord& g) {
  const auto& e = g.evidence;
  if (g.gate == "G1") {
    for (const auto& f : e.value("findings", json::array()))
      if (!f.value("passed", true)) return f.value("check", "") + ": " + f.value("message", "");
    return fmt::format("{} checks", e.value("findings", json::array()).size());
  }
  if (g.gate == "G2") {
    size_t runs = e.value("runs", json::array()).size();
    if (g.status != verify::GateStatus::passed) {
      std::string why = e.value("reason", "");
      const json& last = e["runs"].back();
      if (last.contains("error")) why += ": " + last["error"].get<std::string>().substr(0, 200);
      return fmt::format("{} (after {} run(s))", why, runs);
    }
    double worst = 0;
    for (const auto& r : e["runs"]) worst = std::max(worst, r.value("max_rel", 0.0));
    return fmt::format("{} runs on recorded and fresh random inputs; max relative error {:.2e}", runs, worst);
  }
  if (g.gate == "G3") return model_summary(e);
  if (g.gate == "E2E") {
    std::string correct = "correctness: " + model_summary(e.value("correctness", json::object()));
    if (e.contains("optimized")) return correct + "; " + timing_summary(e, "optimized");
    return correct + (e.contains("reason") ? "; " + e["reason"].get<std::string>() : "");
  }
  if (g.status == verify::GateStatus::not_measured) return e.value("reason", "");
  if (e.contains("error")) return e["error"].get<std::string>().substr(0, 200);
  return timing_summary(e, "candidate");
}

}  // namespace

int verify(const VerifyOptions& o) {
  auto bundle = ir::load_bundle(o.bundle);
  size_t graph = 0;
  const ir::Kernel* kernel = nullptr;
  for (size_t g = 0; g < bundle->graphs.size() && !kernel; ++g)
    if ((kernel = bundle->graphs[g]->find_kernel(o.kernel))) graph = g;
  if (!kernel) {
    if (std::string why = no_triton_kernel(*bundle); !why.empty()) throw UserError(why);
    std::string names;
    for (const auto& g : bundle->graphs)
      for (const auto& k : g->kernels) names += (names.empty() ? "" : ", ") + k.name;
    throw UserError(fmt::format("--kernel {}: no such kernel in {} (kernels: {})", o.kernel, o.bundle, names));
  }
  std::ifstream in(o.candidate, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open the candidate; check the path", o.candidate));
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string candidate = ss.str();

  if (!o.quiet) std::cerr << "[kernelopt] starting a worker and running the cascade\n";
  std::unique_ptr<worker::Supervisor> sup = pipeline::start_worker(o.device, o.gpu);
  verify::CascadeOptions co = o.gate;
  // Each gate and each G2 run as it ends: in CPU mode a cascade takes minutes.
  const auto t0 = std::chrono::steady_clock::now();
  if (!o.quiet)
    co.progress = [t0](const std::string& line) {
      std::cerr << fmt::format("[kernelopt {:.1f}s] {}\n",
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), line);
    };
  // The baseline's settled configs, so G3 and the end-to-end gate change only the candidate (stitch.h).
  worker::RecordLaunchesReply launches = worker::record_launches(*sup, o.bundle, co.load_timeout);
  if (launches.ok) co.pins = stitch::pins_of(launches.launches);
  verify::CascadeResult r = verify::run_cascade(*sup, *bundle, graph, *kernel, candidate, co);
  if (r.accepted) {
    // The whole model with this one candidate stitched in; every other graph as captured.
    std::vector<std::string> modules;
    for (size_t g = 0; g < bundle->graphs.size(); ++g)
      modules.push_back(g == graph ? stitch::stitch(*bundle->graphs[g], {{kernel->name, candidate, o.candidate}}, co.pins)
                                   : stitch::stitch(*bundle->graphs[g], {}));
    co.fp64_rule_only = verify::passed_on_rounding(r);
    r.gates.push_back(verify::end_to_end(*sup, *bundle, modules, co));
    verify::GateStatus e2e = r.gates.back().status;
    r.accepted = verify::lets_through(e2e);
    r.performance_measured = r.performance_measured && e2e == verify::GateStatus::passed;
  }
  json j = results::cascade_json(r);
  j["bundle"] = o.bundle;
  j["candidate"] = o.candidate;
  j["device"] = o.device;
  results::ResultsDb db(o.db.empty() ? results::ResultsDb::default_path() : o.db);
  db.add_record("cascade", fmt::format("{}:{}:{}", o.bundle, kernel->name, r.candidate_hash), j);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    static const std::map<std::string, std::string> names = {
        {"G1", "static"}, {"G2", "multi-seed"}, {"G3", "model"}, {"G4", "performance"}, {"E2E", "end-to-end"}};
    fmt::print("candidate {} for {} (hash {})\n", o.candidate, kernel->name, r.candidate_hash);
    for (const auto& g : r.gates)
      fmt::print("  {:<3} {:<12} {:<13} {}\n", g.gate, names.at(g.gate), verify::to_string(g.status), gate_summary(g));
    fmt::print("{}\n", r.accepted ? (r.performance_measured ? "accepted"
                                                            : "accepted for correctness; performance not measured")
                                  : "rejected");
  }
  return r.accepted ? 0 : 1;
}

}  // namespace kopt::cli
