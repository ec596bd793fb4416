#include "pipeline/bench_problem.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "artifact/pyparse/ast.h"
#include "bench/table.h"
#include "pipeline/job.h"
#include "util/error.h"
#include "verify/rules.h"
#include "worker/client.h"
#include "worker/memory.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (!f) throw UserError(fmt::format("{}: cannot read it", p.string()));
  return ss.str();
}

std::string first_line(std::string s, size_t max = 300) {
  s = s.substr(0, s.find('\n'));
  return s.size() > max ? s.substr(0, max) + "…" : s;
}

// The reply as a one-line reason ("timeout: ...", "OutOfMemoryError: ...").
std::string reply_reason(const json& r) {
  std::string why = first_line(r.value("error", "unknown error"));
  if (r.contains("failure") && r["failure"].is_string()) why = r["failure"].get<std::string>() + ": " + why;
  return why;
}

// Why the optimizer kept torch.compile's modules, in one line, from its report.
std::string fallback_reason(const json& report) {
  const json& e2e = report["module"]["end_to_end"];
  if (e2e.is_object() && e2e.value("status", "") == "failed") return first_line(report.value("note", ""));
  const json& kernels = report.value("kernels", json::array());
  if (kernels.empty()) return "no Triton kernels: the model is vendor calls only";
  std::vector<std::string> notes;
  for (const json& k : kernels) {
    std::string n = k.value("note", "");
    if (!n.empty() && notes.size() < 2) notes.push_back(fmt::format("{}: {}", k.value("name", "?"), n));
  }
  if (notes.empty()) return first_line(report.value("note", ""));
  std::string s = fmt::format("{}", fmt::join(notes, "; "));
  if (kernels.size() > notes.size()) s += fmt::format(" (+{} more kernel(s))", kernels.size() - notes.size());
  return first_line(s, 400);
}

json times_entry(const json& t) {
  json e = json::object();
  // not_timed: why the worker left it out (the eager model whose own run passes the memory plan's target).
  for (const char* k :
       {"device_ms", "wall_ms", "kernel_ms", "triton_ms", "vendor_ms", "kernels_per_call", "not_timed"})
    if (t.contains(k)) e[k] = t[k];
  return e;
}

}  // namespace

std::string failure_kind(const std::string& message) {
  std::string m = lower(message);
  if (m.find("out of memory") != std::string::npos || m.find("outofmemory") != std::string::npos) return "oom";
  if (m.find("fails to import") != std::string::npos || m.find("cannot import") != std::string::npos ||
      m.find(" lacks ") != std::string::npos || m.find("building the problem failed") != std::string::npos)
    return "import";
  // Before "compile": a capture stopped by --timeout reads "capturing X failed: ... did not finish within".
  if (m.find("timeout") != std::string::npos || m.find("timed out") != std::string::npos ||
      m.find("did not finish within") != std::string::npos)
    return "timeout";
  if (m.find("torch.compile failed") != std::string::npos || m.find("fell back to eager") != std::string::npos ||
      m.find("capturing") != std::string::npos)
    return "compile";
  if (m.find("crashed") != std::string::npos) return "crash";
  return "error";
}

std::string failure_kind(const std::string& message, const json& reply) {
  std::string f = reply.is_object() && reply.contains("failure") && reply["failure"].is_string()
                      ? reply["failure"].get<std::string>()
                      : "";
  if (f == "oom" || f == "timeout") return f;
  if (f == "crashed") return "crash";
  return failure_kind(message);
}

fs::path result_dir(const fs::path& out, const bench::Problem& p) {
  return out / "problems" / (p.bundle ? p.id : p.id.substr(0, p.id.size() - 3));  // without ".py"
}

std::optional<double> existing_capture(const fs::path& bundle, const std::string& problem, const std::string& mode) {
  std::error_code ec;
  if (!fs::is_regular_file(bundle / "meta.json", ec) || !fs::is_regular_file(bundle / "problem.py", ec))
    return std::nullopt;
  try {
    json meta = json::parse(read_text(bundle / "meta.json"), nullptr, false);
    if (!meta.is_object() || meta.value("mode", "default") != mode) return std::nullopt;
    if (read_text(bundle / "problem.py") != read_text(problem)) return std::nullopt;
    return meta.value("capture_seconds", 0.0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<double> module_floor_ms(const json& report, double compiled_ms) {
  using Key = std::pair<int, std::string>;  // a kernel: its graph, its name
  // Per kernel: its time and floor per run, all its launches together.
  std::map<Key, std::pair<double, double>> kernels;
  std::set<Key> matmul;  // their floor counts FLOPs, which a region's bytes do not
  for (const json& k : report.value("kernels", json::array())) {
    Key key{k.value("graph", 0), k.value("name", "")};
    const json &b = k.value("baseline_ms", json()), &f = k.value("floor_ms", json());
    if (b.is_number() && f.is_number()) kernels[key] = {b.get<double>(), f.get<double>()};
    if (k.value("flops", json()).is_number() && k["flops"].get<double>() > 0) matmul.insert(key);
  }
  if (kernels.empty() || !(compiled_ms > 0)) return std::nullopt;
  // Each region's kernels (report.json lists one name per launch), each once, and its one-pass floor.
  struct RegionKernels {
    std::set<Key> kernels;
    std::optional<double> floor_ms;
  };
  std::vector<RegionKernels> regions;
  std::map<Key, int> regions_of;
  for (const json& r : report.value("regions", json::array())) {
    const json& f = r.value("floor_ms", json());
    RegionKernels rk{{}, f.is_number() ? std::optional<double>(f.get<double>()) : std::nullopt};
    for (const json& n : r.value("kernels", json::array()))
      if (n.is_string()) rk.kernels.insert({r.value("graph", 0), n.get<std::string>()});
    for (const Key& k : rk.kernels) ++regions_of[k];
    regions.push_back(std::move(rk));
  }
  // A region of two kernels or more whose kernels run nowhere else counts as one: its kernels' time
  // above the region's own floor (its inputs read once, its outputs written once), which fusion can
  // reach and the kernels' separate floors cannot.
  double excess = 0;
  std::set<Key> counted;
  for (const RegionKernels& r : regions) {
    if (r.kernels.size() < 2 || !r.floor_ms) continue;
    double time = 0;
    bool alone = true;
    for (const Key& k : r.kernels) {
      auto it = kernels.find(k);
      alone = alone && it != kernels.end() && regions_of[k] == 1 && !matmul.count(k);
      if (it != kernels.end()) time += it->second.first;
    }
    if (!alone) continue;
    excess += std::max(0.0, time - *r.floor_ms);
    counted.insert(r.kernels.begin(), r.kernels.end());
  }
  // Every other kernel: its own time above its own floor (both per run, all its calls).
  for (const auto& [key, tf] : kernels)
    if (!counted.count(key)) excess += std::max(0.0, tf.first - tf.second);
  // The kernels' times are the profiler's (each kernel timed on its own, its inputs cold), `compiled_ms` the
  // bench's timing of the whole module: the excess is taken in the profiler's frame and carried over in
  // proportion. Subtracted as it stood, a 3.8 GB max pool timed at 13.35 ms alone and 13.09 ms in the
  // module got a floor of 0.43 ms instead of its 0.69 (H200, session 24).
  const json& m = report.value("module", json::object());
  const double triton = m.value("triton_ms", json()).is_number() ? m["triton_ms"].get<double>() : 0.0;
  const double vendor = m.value("vendor_ms", json()).is_number() ? m["vendor_ms"].get<double>() : 0.0;
  if (triton + vendor > 0 && excess < triton + vendor) excess *= compiled_ms / (triton + vendor);
  if (excess >= compiled_ms) return std::nullopt;
  return compiled_ms - excess;
}

// A region's fused launch replaces its kernels as a unit (docs/optimize.md): the kernels it covers keep
// accepted=false, so the row names each chosen region on its own ("region I of graph G: origin").
json fused_regions(const json& report, bool changed) {
  json out = json::array();
  if (!changed) return out;
  for (const json& rg : report.value("regions", json::array())) {
    const json& f = rg.value("fusion", json::object());
    // `chosen` is null where the region's candidates were tried and none won (json::value would throw).
    if (!f.is_object() || !f.contains("chosen") || !f["chosen"].is_string()) continue;
    std::string chosen = f["chosen"], origin = "?";
    for (const json& cand : f.value("candidates", json::array()))
      if (cand.contains("id") && cand["id"] == chosen && cand.contains("origin") && cand["origin"].is_string())
        origin = cand["origin"];
    out.push_back(fmt::format("region {} of graph {}: {}", rg.value("index", 0), rg.value("graph", 0), origin));
  }
  return out;
}

json run_problem(const BenchContext& c, const bench::Problem& p, worker::Supervisor& sup, results::ResultsDb& db,
                 const std::string& gpu, std::optional<int64_t>* in_use_before) {
  const BenchOptions& o = c.options;
  auto t0 = std::chrono::steady_clock::now();
  // Peak device memory over the whole problem: reset now, read when the row is finished. (The job
  // resets it again before its baseline; nothing of the problem's runs on the worker before that.)
  worker::MemoryReading start = worker::read_memory(sup, true);
  if (in_use_before) *in_use_before = start.in_use_bytes;
  fs::path result = result_dir(c.out, p);
  json row = {{"format", "kernelopt-bench-row"}, {"level", p.level},       {"problem", p.id},
              {"name", p.name},                  {"input", p.bundle ? "bundle" : "problem"},
              {"status", "error"},               {"reason", ""},           {"failure", nullptr},
              {"correct", nullptr},              {"matches_eager", nullptr}, {"measured", false},
              {"eager", nullptr},                {"compiled", nullptr},    {"optimized", nullptr},
              {"speedup", nullptr},              {"wall_speedup", nullptr}, {"host_bound", nullptr},
              {"kernels", 0},                    {"accepted_count", 0},    {"accepted", json::array()},
              {"regions_fused", 0},              {"fused", json::array()},
              {"vendor_share", nullptr},         {"result_dir", result_dir("", p)}, {"gpu", nullptr},
              {"stages", nullptr},               {"floor_ms", nullptr},
              {"memory", worker::memory_summary({}, std::nullopt)}};
  json report;  // the job's report.json object, when it finished
  auto finish = [&](json& r) -> json& {
    r["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // After the timings (or the failure): the peak covers the job and the bench's own runs.
    std::optional<int64_t> compiled;
    if (report.is_object() && report.contains("memory"))
      compiled = worker::bytes_of(report["memory"], "compiled_peak_bytes");
    r["memory"] = worker::memory_summary(worker::read_memory(sup, false), compiled);
    return r;
  };
  // `reply`: the worker's failed reply when it is the cause (its own `failure` names the kind).
  auto fail = [&](const std::string& why, const json& reply = json()) -> json {
    // An error row has no result to count: neither correct nor measured (docs/bench.md).
    row["status"] = "error", row["reason"] = first_line(why, 400), row["failure"] = failure_kind(why, reply);
    row["correct"] = nullptr, row["matches_eager"] = nullptr, row["measured"] = false;
    return finish(row);
  };

  // 1. The main job.
  OptimizeOptions oo;
  // Captured ahead of the job (bench_run.cpp): the job starts from that bundle; otherwise it captures.
  std::optional<double> ahead = p.bundle ? std::nullopt : existing_capture(result / "bundle", p.path, o.mode);
  oo.target = ahead ? (result / "bundle").string() : p.path, oo.out = result.string(), oo.device = o.device;
  oo.gpus = gpu, oo.agents = o.agents;
  oo.budget_s = o.budget_s, oo.gate.timeout = std::chrono::seconds(o.timeout_s), oo.mode = o.mode;
  oo.quiet = !o.verbose;
  std::string opt_error;
  try {
    report = run_optimize(oo, db, &sup);
  } catch (const worker::Interrupted&) {
    throw;  // the suite stops; its rows so far stand and a rerun resumes
  } catch (const UserError& e) {
    opt_error = e.what();
  } catch (const py::ParseError& e) {
    opt_error = e.what();
  } catch (const std::exception& e) {
    opt_error = fmt::format("internal error: {}", e.what());
  }
  std::string bundle;
  if (report.is_object()) bundle = report.value("bundle", "");
  else if (p.bundle) bundle = p.path;
  else if (fs::is_regular_file(result / "bundle" / "meta.json")) bundle = (result / "bundle").string();
  if (bundle.empty()) return fail(opt_error);  // never captured: nothing to measure against
  // A job that ran out of memory (its baseline, recording or profile did not fit, docs/memory.md) is an
  // error row naming the stage and bytes, not a fallback that would count as 1.0x.
  if (failure_kind(opt_error) == "oom") return fail(opt_error);

  // 2. The result's modules: the optimized ones, or (fallback) the bundle's own.
  bool changed = report.is_object() && report["module"].value("changed", false);
  std::vector<std::string> sources;
  if (report.is_object()) {
    row["stages"] = json::object();  // where the problem's time went: seconds per stage of the job, then the bench's
    for (const json& st : report.value("stages", json::array())) row["stages"][st.value("name", "?")] = st["seconds"];
    if (ahead) row["stages"]["capture_ahead"] = *ahead;  // spent before the job (several problems at once)
    row["kernels"] = report["kernels"].size();
    for (const json& k : report["kernels"])
      if (k.value("accepted", false) && changed)
        row["accepted"].push_back(fmt::format("{}: {}", k.value("name", "?"), k.value("chosen", "?")));
    row["accepted_count"] = row["accepted"].size();
    row["fused"] = fused_regions(report, changed);
    row["regions_fused"] = row["fused"].size();
  }
  try {
    json meta = json::parse(read_text(fs::path(bundle) / "meta.json"));
    for (const json& g : meta["graphs"])
      sources.push_back(read_text((changed ? result : fs::path(bundle)) / g["module"].get<std::string>()));
  } catch (const std::exception& e) {
    return fail(opt_error.empty() ? std::string(e.what()) : opt_error);
  }
  auto timeout = std::chrono::seconds(o.timeout_s);

  auto since = [](std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
  };
  auto t_check = std::chrono::steady_clock::now();
  // 3. Correct? The final model against torch.compile's (G3's rule, docs/gates.md) and against eager.
  verify::CascadeOptions co;
  co.timeout = timeout;
  worker::RunModuleReply rm =
      verify::model_run(sup, {.bundle = bundle, .sources = sources, .tolerances = co.tol.to_json()}, co, false);
  if (verify::failed_reply(rm))
    return opt_error.empty() ? fail("the result did not run: " + reply_reason(rm.raw), rm.raw) : fail(opt_error);
  // Within tolerance of torch.compile's output, or else (the fp64 reply) no less accurate than it.
  verify::Verdict check = verify::model_verdict(rm, co);
  row["correct"] = check.passed;
  // Which rule decided and by what numbers; when the float64 model had to decide, what each output's
  // comparison with torch.compile's said (why a fallback's own modules were not within tolerance).
  row["check"] = check.evidence;
  if (!rm.within_tolerance()) {
    json outs = json::array();
    for (const json& t : rm.vs_baseline.value("outputs", json::array())) {
      json o = json::object();
      for (const char* k : {"ok", "scaled_ok", "nan_positions_match", "inf_positions_match", "max_abs", "max_rel",
                            "reason"})
        if (t.contains(k)) o[k] = t[k];
      outs.push_back(o);
    }
    row["check"]["vs_baseline_outputs"] = outs;
  }
  row["matches_eager"] = rm.vs_eager.value("ok", false);

  if (row["stages"].is_object()) row["stages"]["bench_check"] = since(t_check);
  auto t_times = std::chrono::steady_clock::now();
  // 4. Times, side by side in one process (GPU only).
  worker::BenchTimesRequest treq{.bundle = bundle, .reps = o.reps};
  if (changed) treq.sources = sources;
  worker::BenchTimesReply t = worker::bench_times(sup, treq, timeout);
  if (verify::failed_reply(t))
    return opt_error.empty() ? fail("timing failed: " + reply_reason(t.raw), t.raw) : fail(opt_error);
  if (row["stages"].is_object()) row["stages"]["bench_times"] = since(t_times);
  if (t.measured) {
    row["measured"] = true;
    row["eager"] = times_entry(t.eager);
    row["compiled"] = times_entry(t.compiled);
    // A fallback runs torch.compile's own modules: the same numbers, speedup exactly 1.
    row["optimized"] = times_entry(changed ? t.optimized : t.compiled);
    const json &cm = row["compiled"], &op = row["optimized"];
    row["speedup"] = changed ? cm["device_ms"].get<double>() / op["device_ms"].get<double>() : 1.0;
    row["wall_speedup"] = changed ? cm["wall_ms"].get<double>() / op["wall_ms"].get<double>() : 1.0;
    double k = cm.value("kernel_ms", 0.0);
    row["host_bound"] = cm["wall_ms"].get<double>() > bench::kHostBound * k;
    if (k > 0) row["vendor_share"] = cm.value("vendor_ms", 0.0) / k;
    // A copy: hellos() returns by value (a reference into that temporary dangled and now and then
    // crashed `kernelopt bench` after timing a problem).
    if (json h = sup.hellos().at(0); h.contains("gpu") && h["gpu"].is_object()) row["gpu"] = h["gpu"].value("name", "");
  }
  if (row["measured"] == true && report.is_object())
    if (auto f = module_floor_ms(report, row["compiled"]["device_ms"].get<double>())) row["floor_ms"] = *f;
  if (!opt_error.empty()) {
    row["status"] = "fallback", row["reason"] = first_line("the optimizer failed: " + opt_error, 400);
    row["failure"] = failure_kind(opt_error);
  } else if (changed) {
    row["status"] = "optimized";
  } else {
    row["status"] = "fallback", row["reason"] = fallback_reason(report);
  }
  if (row["host_bound"] == true) {
    std::string note = fmt::format("host overhead dominates: a torch.compile call takes {:.4f} ms wall, its kernels "
                                   "{:.4f} ms",
                                   row["compiled"]["wall_ms"].get<double>(), row["compiled"]["kernel_ms"].get<double>());
    row["reason"] = row["reason"].get<std::string>().empty() ? note : row["reason"].get<std::string>() + "; " + note;
  }
  return finish(row);
}

json bench_object(const std::string& suite, const json& settings, const json& shards, size_t expected,
                  std::vector<json> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    return std::make_pair(a.value("level", 0), a.value("problem", "")) <
           std::make_pair(b.value("level", 0), b.value("problem", ""));
  });
  bool measured = settings.value("device", "cuda") != "cpu";
  json gpu = nullptr, versions = json::object();
  for (const json& r : rows) {
    if (r.contains("gpu") && r["gpu"].is_string()) gpu = r["gpu"];
    if (r.contains("versions") && r["versions"].is_object()) versions = r["versions"];
  }
  json levels = bench::summarize(rows);
  return {{"format", "kernelopt-bench"}, {"format_version", 1},       {"suite", suite},
          {"device", settings.value("device", "cuda")}, {"performance_measured", measured}, {"gpu", gpu},
          {"versions", versions}, {"settings", settings}, {"shards", shards},
          {"expected", expected}, {"levels", levels}, {"rows", rows}};
}

}  // namespace kopt::pipeline
