// The suite runner (pipeline/bench_run.h).
#include "pipeline/bench_run.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/suite.h"
#include "bench/table.h"
#include "pipeline/bench_problem.h"
#include "pipeline/capture.h"
#include "pipeline/workers.h"
#include "report/bench_report.h"
#include "report/report.h"
#include "results/db.h"
#include "util/error.h"
#include "util/split.h"
#include "verify/cascade.h"
#include "worker/client.h"
#include "worker/memory.h"

namespace kopt::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What decides a problem's row: a run directory only ever holds rows made under these.
json settings_of(const BenchOptions& o) {
  verify::CascadeOptions co;
  return {{"device", o.device}, {"budget_s", o.budget_s}, {"agents", o.agents}, {"mode", o.mode},
          {"reps", o.reps},     {"gamma", co.gamma},      {"seeds", co.seeds},   {"tolerances", co.tol.to_json()}};
}

// The settings that differ, "budget_s 10 there, 5 here; reps 20 there, 50 here": the field to change, not the
// whole object (a settings object holds the tolerances, so its dump is a screenful).
std::string settings_difference(const json& there, const json& here) {
  std::vector<std::string> diffs;
  auto value = [](const json& o, const std::string& k) -> std::string {
    if (!o.is_object() || !o.contains(k)) return "absent";
    const json& v = o[k];
    if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 1e15)
      return fmt::format("{}", static_cast<int64_t>(v.get<double>()));  // 60, not 60.0
    return v.dump();
  };
  std::set<std::string> keys;
  for (const json* o : {&there, &here})
    if (o->is_object())
      for (auto it = o->begin(); it != o->end(); ++it) keys.insert(it.key());
  for (const std::string& k : keys)
    if (value(there, k) != value(here, k))
      diffs.push_back(fmt::format("{} {} there, {} here", k, value(there, k), value(here, k)));
  return diffs.empty() ? "settings differ" : fmt::format("{}", fmt::join(diffs, "; "));
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str(), nullptr, false);
}

// DIR/run.json: the run's id (the resume key's prefix) and settings. A fresh id when DIR holds no
// run (or --fresh); an existing run with other settings is a UserError, never silently mixed.
json open_run(const fs::path& out, const json& settings, const std::string& shard, bool fresh) {
  fs::path path = out / "run.json";
  if (!fresh && fs::exists(path)) {
    json run = read_json(path);
    if (run.is_discarded() || !run.contains("run_id"))
      throw UserError(fmt::format("{}: not a bench run file; pass another --out or --fresh", path.string()));
    if (run["settings"] != settings)
      throw UserError(fmt::format("{} holds a run with other settings ({}); resume it with the same options, or pass "
                                  "--fresh or another --out",
                                  out.string(), settings_difference(run["settings"], settings)));
    if (run.value("shard", "") != shard)
      throw UserError(fmt::format("{} holds shard {} of a run, not {}; pass another --out for each shard", out.string(),
                                  run.value("shard", ""), shard));
    return run;
  }
  std::random_device rd;
  json run = {{"format", "kernelopt-bench-run"}, {"run_id", fmt::format("{:08x}{:08x}", rd(), rd())},
              {"settings", settings}, {"shard", shard}};
  fs::create_directories(out);
  report::detail::write_file_atomic(path, run.dump(2) + "\n");
  return run;
}

std::string progress_line(const json& row) {
  std::string s = row.value("status", "error");
  if (row.contains("speedup") && row["speedup"].is_number()) s += fmt::format(", {:.3f}x over torch.compile (GPU time)", row["speedup"].get<double>());
  else if (s != "error") s += ", performance not measured";
  if (row.contains("correct") && row["correct"].is_boolean()) s += row["correct"].get<bool>() ? ", correct" : ", NOT correct";
  s += fmt::format(", {}/{} kernel(s) replaced", row.value("accepted_count", 0), row.value("kernels", 0));
  if (int n = row.value("regions_fused", 0); n > 0) s += fmt::format(", {} region(s) fused", n);
  if (row.contains("host_bound") && row["host_bound"] == true) s += ", host-bound";
  if (std::string mem = report::peak_mem_cell(row); mem != report::detail::kDash) s += ", peak memory " + mem;
  std::string why = row.value("reason", "");
  if (!why.empty()) s += " — " + why.substr(0, 160);
  return s;
}

// Device memory a worker may keep after forget_bundles beyond what it held before the problem
// (allocator rounding, Triton's and cuBLAS's workspaces) before the run warns of a leak.
constexpr int64_t kLeakWarnBytes = 256LL << 20;

// forget_bundles after a problem: the worker drops its state; what it still holds in use goes into the
// row, with a warning when that is well above what it held before the problem (`before`).
void forget_problem(worker::Supervisor& sup, json& row, std::optional<int64_t> before) {
  worker::Reply f = worker::forget_bundles(sup, std::chrono::seconds(120));
  if (!f.ok) {
    std::cerr << "[bench] warning: the worker did not drop the finished problem's state: "
              << f.raw.value("error", "?").substr(0, 200) << "\n";
    return;
  }
  std::optional<int64_t> after = worker::bytes_of(f.raw, "in_use_bytes");
  if (!after) return;  // a worker that does not say
  row["memory_after_forget_bytes"] = *after;
  if (before && *after > *before + kLeakWarnBytes)
    std::cerr << fmt::format("[bench] warning: {}: the worker still has {} in use after dropping the "
                             "problem's bundles, {} before the problem started; later problems have that much less\n",
                             row.value("problem", "?"), report::detail::format_mem(static_cast<double>(*after)),
                             report::detail::format_mem(static_cast<double>(*before)));
}

}  // namespace

// The captures of the problems left, before the first job, --capture-jobs at a time. A capture is
// torch.compile in a process of its own — about 20 s a problem on the H200, most of it compiling on
// the CPU — and nothing is timed while they run (no worker has started). They are made with
// Inductor's autotune cache off, so the worker that loads a bundle times its kernels' launch configs
// itself, alone on its GPU, instead of reusing a choice timed beside other captures. A capture that
// fails here leaves no bundle and its job captures again, alone (so a problem too large to capture
// beside others still runs), and reports the failure if it fails again.
void capture_ahead(const BenchOptions& o, const fs::path& out, const std::vector<bench::Problem>& problems,
                   const std::vector<std::optional<json>>& rows, const std::vector<std::string>& gpus) {
  if (o.capture_jobs <= 0) return;
  std::vector<size_t> todo;
  for (size_t i = 0; i < problems.size(); ++i) {
    const bench::Problem& p = problems[i];
    if (rows[i] || p.bundle) continue;
    if (!existing_capture(result_dir(out, p) / "bundle", p.path, o.mode)) todo.push_back(i);
  }
  if (todo.empty()) return;
  size_t jobs = std::min<size_t>(static_cast<size_t>(o.capture_jobs), todo.size());
  std::cerr << fmt::format("[bench] capturing {} problem(s) ahead, {} at a time\n", todo.size(), jobs);
  auto t0 = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0}, failed{0};
  std::mutex mu;
  auto work = [&](size_t slot) {
    for (size_t n; (n = next++) < todo.size();) {
      const bench::Problem& p = problems[todo[n]];
      CaptureOptions c;
      c.problem = p.path, c.out = (result_dir(out, p) / "bundle").string(), c.mode = o.mode;
      set_job_device(c, o.device);
      c.gpu = o.device == "cuda" ? gpus[slot % gpus.size()] : "", c.timeout_s = o.timeout_s, c.force = true;
      c.autotune_cache = false;
      std::string error;
      auto s0 = std::chrono::steady_clock::now();
      int rc = 1;
      try {
        fs::create_directories(result_dir(out, p));
        rc = capture_and_wait(c, &error);
      } catch (const std::exception& e) {
        error = e.what();
      }
      failed += rc != 0;
      std::lock_guard lock(mu);
      std::cerr << fmt::format("[bench capture {}/{}] {}: {} ({:.0f} s)\n", n + 1, todo.size(), p.id,
                               rc == 0 ? "captured" : "failed, its job will capture it again: " + error,
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < jobs; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  std::cerr << fmt::format("[bench] {} of {} problem(s) captured ahead in {:.0f} s\n", todo.size() - failed,
                           todo.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

BenchRun run_bench(const BenchOptions& o) {
  if (o.device != "cuda" && o.device != "cpu") throw UserError("--device " + o.device + ": use cuda or cpu");
  if (o.budget_s <= 0) throw UserError("--budget-per-problem must be a positive number of seconds");
  if (o.reps <= 0) throw UserError("--reps must be a positive number");
  std::vector<int> levels = bench::parse_levels(o.levels);
  bench::Shard shard = bench::parse_shard(o.shard);
  std::vector<std::string> notes;
  std::vector<bench::Problem> problems = bench::select_shard(bench::discover(o.suite, levels, &notes), shard);
  for (const std::string& n : notes) std::cerr << "[bench] " << n << "\n";
  std::vector<std::string> gpus = o.device == "cpu" ? std::vector<std::string>{"cpu"} : split_list(o.gpus);
  if (gpus.empty()) throw UserError("--gpus: give at least one GPU index, e.g. --gpus 0 or --gpus 0,1");

  fs::path out = !o.out.empty() ? fs::path(o.out) : fs::path(fs::path(o.suite).filename().string() + ".bench");
  json settings = settings_of(o);
  json run = open_run(out, settings, shard.text(), o.fresh);
  std::string run_id = run["run_id"];
  run["suite"] = o.suite, run["expected"] = problems.size();  // what `bench merge` reads
  report::detail::write_file_atomic(out / "run.json", run.dump(2) + "\n");
  std::string db_path = o.db.empty() ? results::ResultsDb::default_path() : o.db;
  auto key = [&](const bench::Problem& p) { return run_id + "|" + p.id; };

  // Resume: every problem this run finished before is read back — from the database, or else from
  // DIR/results.jsonl (a task rerun on another node, with a node-local database: docs/scaling.md).
  std::vector<std::optional<json>> rows(problems.size());
  std::map<std::string, json> written;
  {
    std::ifstream jf(out / "results.jsonl");
    for (std::string line; std::getline(jf, line);) {
      json r = json::parse(line, nullptr, false);
      if (r.is_object() && r.value("run_id", "") == run_id) written[r.value("problem", "")] = r;
    }
  }
  size_t resumed = 0;
  {
    results::ResultsDb db(db_path);
    for (size_t i = 0; i < problems.size(); ++i) {
      std::optional<json> r = db.latest_record("bench", key(problems[i]));
      if (auto it = written.find(problems[i].id); !r && it != written.end()) r = it->second;
      if (r) {
        rows[i] = *r, ++resumed;
        std::cerr << fmt::format("[bench {}/{}] {}: done in an earlier run (resumed): {}\n", i + 1, problems.size(),
                                 problems[i].id, progress_line(*r));
      }
    }
  }
  std::cerr << fmt::format("[bench] {} problem(s) in shard {} of {} ({} resumed); results in {}\n", problems.size(),
                           shard.text(), o.suite, resumed, out.string());

  capture_ahead(o, out, problems, rows, gpus);

  std::mutex mu;
  auto write_outputs = [&] {  // under mu
    std::vector<json> done;
    for (const auto& r : rows)
      if (r) done.push_back(*r);
    json shards = json::array({shard.text()});
    report::write_bench_outputs(bench_object(o.suite, settings, shards, problems.size(), done), out);
  };
  auto started = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  std::string start_error;
  int interrupt = 0;
  auto work = [&](const std::string& gpu) {
    std::unique_ptr<worker::Supervisor> sup;
    try {
      results::ResultsDb db(db_path);  // one connection per thread; SQLite serialises the writers
      for (size_t i; (i = next++) < problems.size();) {
        if (rows[i]) continue;
        if (!sup) sup = start_workers(o.device, {gpu});
        const bench::Problem& p = problems[i];
        std::cerr << fmt::format("[bench {}/{}] {}: running on {} (budget {} s)\n", i + 1, problems.size(), p.id,
                                 o.device == "cpu" ? "the CPU" : "GPU " + gpu, o.budget_s);
        json row;
        std::optional<int64_t> in_use_before;
        try {
          row = run_problem({o, out}, p, *sup, db, gpu, &in_use_before);
        } catch (const worker::Interrupted&) {
          throw;
        } catch (const std::exception& e) {  // a bug shows in this problem's row; the run goes on
          row = {{"format", "kernelopt-bench-row"}, {"level", p.level}, {"problem", p.id}, {"name", p.name},
                 {"status", "error"}, {"failure", "internal"},
                 {"reason", fmt::format("internal error: {} (please report this)", e.what())}};
        }
        row["versions"] = sup->hellos().at(0).value("versions", json::object());
        row["run_id"] = run_id;
        forget_problem(*sup, row, in_use_before);  // before the record: the row keeps what the worker still holds
        db.add_record("bench", key(p), row);  // one transaction: the row is durable before it counts as done
        std::lock_guard lock(mu);
        rows[i] = row;
        write_outputs();  // before the line: a problem reported done is in the run's files, even if killed next
        std::cerr << fmt::format("[bench {}/{}] {}: {} ({:.0f} s)\n", i + 1, problems.size(), p.id, progress_line(row),
                                 row.value("seconds", 0.0));
      }
    } catch (const worker::Interrupted& e) {  // the problem's partial report is written; no row for it
      std::lock_guard lock(mu);
      interrupt = e.signal;
      next = problems.size();
    } catch (const std::exception& e) {  // no worker, or the database: the run cannot go on here
      std::lock_guard lock(mu);
      if (start_error.empty()) start_error = e.what();
      next = problems.size();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < gpus.size(); ++t) pool.emplace_back(work, gpus[t]);
  work(gpus[0]);
  for (auto& t : pool) t.join();
  if (interrupt)
    throw worker::Interrupted(interrupt, fmt::format("interrupted ({}): the rows finished so far are in {}; running "
                                                     "the same command again resumes",
                                                     worker::signal_name(interrupt), out.string()));
  if (!start_error.empty()) throw UserError(start_error);

  std::lock_guard lock(mu);
  write_outputs();
  std::vector<json> done;
  for (const auto& r : rows) done.push_back(*r);
  return {bench_object(o.suite, settings, json::array({shard.text()}), problems.size(), done), out, problems.size(),
          resumed, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()};
}

}  // namespace kopt::pipeline
