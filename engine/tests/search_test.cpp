// The search's GPU path — screening in batches against the budget, the fastest screened candidate
// through the cascade, the fallback note's counts — on a real corpus bundle. The worker is the real
// one in CPU mode (G1-G3 run in Triton's interpreter) whose `screen` and `time_kernel` answer from a
// formula of the candidate's source (tests/data/timed_cpu_worker.py): no GPU needed, nothing timed.
#include "search/search.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "agents/agent.h"
#include "agents/coder/fusion/fusion.h"
#include "profile/family.h"
#include "search/regions.h"
#include "results/db.h"
#include "results/record.h"
#include "test_util.h"
#include "worker/supervisor.h"

namespace kopt {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct TimedWorker {
  fs::path dir;
  std::unique_ptr<worker::Supervisor> sup;
  std::unique_ptr<results::ResultsDb> db;

  explicit TimedWorker(const std::string& name, double screen_sleep_s) {
    dir = fs::temp_directory_path() / ("kopt_search_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    worker::SupervisorOptions o;
    o.argv = {"python3", std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/timed_cpu_worker.py"};
    o.env["PYTHONPATH"] = std::string(KOPT_SOURCE_DIR) + "/python";
    o.env["FAKE_LOG"] = (dir / "requests.jsonl").string();
    o.env["FAKE_SCREEN_SLEEP"] = std::to_string(screen_sleep_s);
    o.slots = {"cpu"};
    sup = std::make_unique<worker::Supervisor>(o);
    db = std::make_unique<results::ResultsDb>((dir / "results.db").string());
  }
  ~TimedWorker() {
    sup->shutdown();
    fs::remove_all(dir);
  }
  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream in(dir / "requests.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
};

// gelu_scale's pointwise kernel as the profiler would describe it on a GPU: 1 ms, floor 0.2 ms.
agents::KernelProfile gelu_profile(worker::Supervisor& sup, const ir::Bundle& b) {
  agents::KernelProfile k;
  k.kernel = &b.graphs[0]->kernels.at(0);
  k.family = profile::family(*k.kernel);
  json r = sup.call({{"op", "record_launches"}, {"bundle", b.dir}}, 300s);
  for (const json& l : r["launches"])
    if (l.value("name", "") == k.kernel->name) k.launches.push_back(l);
  k.time_ms = 1.0, k.floor_ms = 0.2, k.calls_per_run = 1, k.bottleneck = "memory";
  return k;
}

search::SearchOptions gpu_options(std::chrono::steady_clock::duration budget) {
  search::SearchOptions o;
  o.gpu = true;
  o.deadline = std::chrono::steady_clock::now() + budget;
  o.cascade.seeds = 1;
  o.cascade.timeout = 300s;
  o.cascade.load_timeout = 300s;
  o.tune_rounds = 0;
  o.cache_prefix = "search_test";
  return o;
}

TEST(SearchGpuPath, ScreensInBatchesAndAcceptsTheFastestThroughEveryGate) {
  TimedWorker w("accept", 0.0);
  auto b = testing::corpus("gelu_scale");
  auto agents = agents::make_agents("builtin");
  agents::KernelProfile k = gelu_profile(*w.sup, *b);
  ASSERT_FALSE(k.launches.empty());
  search::Cache cache{*w.db, {}};
  search::SearchOptions o = gpu_options(600s);
  search::KernelOutcome out = search::search_kernel(*w.sup, *b, agents, k, o, cache, [](const std::string&) {});

  size_t screened = 0;
  for (const json& r : w.requests())
    if (r["op"] == "screen") {
      EXPECT_LE(r["sources"].get<size_t>(), 16u);  // the budget is checked between batches of 16
      screened += r["sources"].get<size_t>();
    }
  EXPECT_EQ(screened, out.candidates.size());
  ASSERT_TRUE(out.chosen.has_value()) << out.note;
  const search::CandidateRecord& c = out.candidates[*out.chosen];
  ASSERT_TRUE(c.screen_ratio.has_value());
  for (const auto& other : out.candidates)  // the fastest screened candidate is the one verified first
    if (other.screen_ratio) EXPECT_LE(*c.screen_ratio, *other.screen_ratio);
  ASSERT_TRUE(out.speedup.has_value());
  EXPECT_NEAR(*out.speedup, 1.0 / *c.screen_ratio, 1e-9);  // G4's measured ratio, not the screen's guess
  ASSERT_EQ(c.result->gates.size(), 4u);
  for (const auto& g : c.result->gates) {
    EXPECT_EQ(g.status, verify::GateStatus::passed) << g.gate;
    EXPECT_TRUE(g.evidence.contains("seconds")) << g.gate;  // where a slow cascade spent its time
  }
}

TEST(SearchGpuPath, ASpentBudgetStopsScreeningAndItsFastestCandidateIsVerifiedWhenTheUserAskedForCascades) {
  TimedWorker w("budget", 1.0);  // each screen request takes a second; the budget is half of one
  auto b = testing::corpus("gelu_scale");
  auto agents = agents::make_agents("builtin");
  agents::KernelProfile k = gelu_profile(*w.sup, *b);
  search::Cache cache{*w.db, {}};
  search::SearchOptions o = gpu_options(500ms);
  o.first_cascade_always = true;  // --max-cascades given: the first cascade runs past the budget
  search::KernelOutcome out = search::search_kernel(*w.sup, *b, agents, k, o, cache, [](const std::string&) {});

  ASSERT_GT(out.candidates.size(), 16u);
  size_t screens = 0, timed = 0;
  for (const json& r : w.requests()) {
    screens += r["op"] == "screen";
    timed += r["op"] == "time_kernel";
  }
  EXPECT_EQ(screens, 1u);  // one batch ran, then the budget was spent
  // The fastest of that batch still went through the cascade (one, not max_cascades): what the
  // screening found is verified rather than thrown away.
  size_t cascades = 0, left = 0;
  for (const auto& c : out.candidates) {
    cascades += c.result.has_value();
    left += c.screen_error == "not screened: the budget was spent";
  }
  EXPECT_EQ(cascades, 1u);
  EXPECT_GT(timed, 0u);
  ASSERT_TRUE(out.chosen.has_value()) << out.note;
  EXPECT_EQ(left, out.candidates.size() - 16);
  EXPECT_TRUE(out.candidates[*out.chosen].screen_ratio.has_value());
}

TEST(SearchGpuPath, ASpentBudgetStartsNoCascadeAndTheNoteSaysWhyAndHowMuchMoreWouldDo) {
  TimedWorker w("budget", 1.0);
  auto b = testing::corpus("gelu_scale");
  auto agents = agents::make_agents("builtin");
  agents::KernelProfile k = gelu_profile(*w.sup, *b);
  search::Cache cache{*w.db, {}};
  search::SearchOptions o = gpu_options(500ms);
  search::KernelOutcome out = search::search_kernel(*w.sup, *b, agents, k, o, cache, [](const std::string&) {});
  size_t cascades = 0, refused = 0;
  for (const auto& c : out.candidates) {
    cascades += c.result.has_value();
    refused += c.not_run.rfind("not run: its cascade would take about", 0) == 0;
  }
  EXPECT_EQ(cascades, 0u);
  EXPECT_EQ(refused, 1u);  // the first in line says why; the search stops there
  EXPECT_FALSE(out.chosen.has_value());
  EXPECT_EQ(out.note.rfind("not tried: a cascade would take about", 0), 0u) << out.note;
  EXPECT_NE(out.note.find("larger would allow one"), std::string::npos) << out.note;
}

TEST(SearchCost, ACascadeIsEstimatedFromTheKernelsShareOfAModelRunOrWhatAnEarlierOneTook) {
  search::CostInputs c{.gpu = false, .model_run_s = 10, .model_elements = 1000, .seeds = 5};
  const double runs = search::cascade_kernel_runs(5);
  EXPECT_DOUBLE_EQ(search::cascade_seconds(c, 1000, std::nullopt), runs * 10 + 20);
  EXPECT_DOUBLE_EQ(search::cascade_seconds(c, 250, std::nullopt), runs * 2.5 + 20);  // a quarter of the run
  EXPECT_DOUBLE_EQ(search::cascade_seconds(c, 250, 500.0), 500.0);  // an earlier cascade took longer
  c.model_run_s = 0;  // before the baseline: from the sizes at the interpreter's rate
  EXPECT_DOUBLE_EQ(search::cascade_seconds(c, 1000, std::nullopt),
                   (runs + 2) * 1000 * search::kInterpreterSecondsPerElement);
  EXPECT_GT(search::cascade_kernel_runs(5), search::cascade_kernel_runs(0));
  // A GPU: a compile and two model runs, plus the gates' work per byte the kernel moves.
  search::CostInputs g{.gpu = true, .model_run_s = 0.03, .model_elements = 1000, .seeds = 5};
  EXPECT_DOUBLE_EQ(search::cascade_seconds(g, 1000, std::nullopt), 2.06);
  EXPECT_NEAR(search::cascade_seconds(g, 1000, std::nullopt, 3e9), 2.06 + 3e9 * search::kGpuCascadeSecondsPerByte,
              1e-9);
  // An RMS norm moving 10.4 GB: 12 s of gates outside G3 (session 28); 34 s were left at the default budget.
  EXPECT_GT(search::cascade_seconds(g, 1000, std::nullopt, 10.4e9), 14.0);
  EXPECT_LT(search::cascade_seconds(g, 1000, std::nullopt, 10.4e9), 34.0);
}

TEST(SearchCost, ASlowKernelsOwnRunsAreInItsCascadeAndG4TimesItFewerTimes) {
  // A 192 ms exclusive cumsum moving 7.4 GB (H100, session 37): G2 11.3 s, G3 12.1 s, G4 (50 repetitions) 11.8 s
  // against an estimate of 17 s from its bytes; its 21x winner then had no time for the end-to-end gate.
  search::CostInputs g{.gpu = true, .model_run_s = 0.192, .model_elements = 1000, .seeds = 5};
  EXPECT_EQ(search::timing_reps(50, 192), 10);  // two seconds of launches, never under 10
  EXPECT_EQ(search::timing_reps(50, 30), 50);   // up to 100 ms: as configured
  EXPECT_EQ(search::timing_reps(50, 1000), 10);
  EXPECT_EQ(search::timing_reps(5, 500), 5);  // never more than configured
  double bytes_only = search::cascade_seconds(g, 1000, std::nullopt, 7.4e9);
  EXPECT_LT(bytes_only, 20.0);
  double with_runs = search::cascade_seconds(g, 1000, std::nullopt, 7.4e9, 192, search::timing_reps(50, 192));
  EXPECT_GT(with_runs, 24.0);  // G4 at 10 repetitions and G2's runs added: about what the gates take then
  EXPECT_LT(with_runs, 40.0);
  // The end-to-end gate's timing of a 192 ms model: 10 repetitions of both models, not a second and a half.
  EXPECT_NEAR(search::end_to_end_seconds(g), 1.0 + (3 + 2 * 10) * 0.192, 1e-9);
  g.model_run_s = 0.005;  // a 5 ms model: 50 repetitions, half a second
  EXPECT_NEAR(search::end_to_end_seconds(g), 1.0 + (3 + 2 * 50) * 0.005, 1e-9);
}

TEST(SearchCost, ALaunchIteratesTheProductOfItsLiteralNumelArguments) {
  auto b = testing::corpus("cumsum_long_large");  // triton_spl_fused_cumsum_0.run(arg0_1, buf0, workspace_0, 4, 2097152)
  EXPECT_DOUBLE_EQ(search::model_elements(*b), 4.0 * 2097152);
  auto s = testing::corpus("softmax_large");
  EXPECT_DOUBLE_EQ(search::model_elements(*s), 8192.0 * 8192);
}

TEST(SearchGpuPath, NothingScreenedFasterMeansNoCascadeAndTheNoteCountsWhatWasLeft) {
  TimedWorker w("budget_slow", 1.0);
  auto b = testing::corpus("gelu_scale");
  auto agents = agents::make_agents("builtin");
  agents::KernelProfile k = gelu_profile(*w.sup, *b);
  search::Cache cache{*w.db, {}};
  search::SearchOptions o = gpu_options(500ms);
  o.cascade.gamma = 1e6;  // no screened candidate is a million times faster: none is worth a cascade
  search::KernelOutcome out = search::search_kernel(*w.sup, *b, agents, k, o, cache, [](const std::string&) {});
  size_t timed = 0;
  for (const json& r : w.requests()) timed += r["op"] == "time_kernel";
  EXPECT_EQ(timed, 0u);
  EXPECT_FALSE(out.chosen.has_value());
  size_t left = out.candidates.size() - 16;
  EXPECT_NE(out.note.find("16 screened"), std::string::npos) << out.note;
  EXPECT_NE(out.note.find(std::to_string(left) + " not screened: the budget was spent"), std::string::npos)
      << out.note;
}

// The built-in coder's first two candidates for gelu_scale, one timed at 0.8 of the baseline and one that
// compiles slowly (screen_last) timed at 0.5.
struct OneSlowCompile : agents::Coder {
  std::unique_ptr<agents::Coder> inner;
  std::vector<agents::Candidate> propose(const agents::KernelProfile& k, const agents::Plan& p) override {
    std::vector<agents::Candidate> all = inner->propose(k, p);
    all.resize(2);
    all[0].source += "# fake-ratio: 0.8\n";
    all[1].source += "# fake-ratio: 0.5\n", all[1].screen_last = true;
    return {all[1], all[0]};  // the slow one first: the search, not the coder's order, puts it last
  }
  agents::fusion::RegionPlan propose_region(const agents::RegionUnit& u) override { return inner->propose_region(u); }
};

// gelu_scale searched on the timed worker with OneSlowCompile's two candidates, `budget` from when the
// search starts (recording the launches first takes seconds on a loaded machine).
search::KernelOutcome search_with_a_slow_compile(TimedWorker& w, search::SearchOptions o,
                                                 std::chrono::steady_clock::duration budget) {
  auto b = testing::corpus("gelu_scale");
  auto agents = agents::make_agents("builtin");
  auto coder = std::make_unique<OneSlowCompile>();
  coder->inner = std::move(agents.coder);
  agents.coder = std::move(coder);
  agents::KernelProfile k = gelu_profile(*w.sup, *b);
  search::Cache cache{*w.db, {}};
  o.deadline = std::chrono::steady_clock::now() + budget;
  return search::search_kernel(*w.sup, *b, agents, k, o, cache, [](const std::string&) {});
}

TEST(SearchGpuPath, SlowCompilesAreScreenedAfterTheOthersBestHadItsCascadeAndUnderACompileLimit) {
  TimedWorker w("late", 0.0);
  search::KernelOutcome out = search_with_a_slow_compile(w, gpu_options(600s), 600s);

  std::vector<std::string> ops;
  std::vector<json> screens;
  for (const json& r : w.requests()) {
    if (ops.empty() || ops.back() != r["op"]) ops.push_back(r["op"]);
    if (r["op"] == "screen") screens.push_back(r);
  }
  // The quick candidate screened and verified (G4 times it) before the slow one is even compiled.
  EXPECT_EQ(ops, (std::vector<std::string>{"screen", "time_kernel", "screen", "time_kernel"}));
  ASSERT_EQ(screens.size(), 2u);
  EXPECT_TRUE(screens[0]["compile_limit_s"].is_null());
  ASSERT_TRUE(screens[1]["compile_limit_s"].is_number());
  // The slow compiles may take what is left of the budget less one cascade's estimate.
  EXPECT_GT(screens[1]["compile_limit_s"].get<double>(), 500.0);
  EXPECT_LT(screens[1]["compile_limit_s"].get<double>(), 600.0);
  // It screened faster than the one chosen, so it got its cascade and replaced it.
  ASSERT_TRUE(out.chosen.has_value()) << out.note;
  EXPECT_TRUE(out.candidates[*out.chosen].candidate.screen_last);
  EXPECT_NEAR(*out.speedup, 2.0, 1e-9);
  size_t cascades = 0;
  for (const auto& c : out.candidates) cascades += c.result.has_value();
  EXPECT_EQ(cascades, 2u);
}

TEST(SearchGpuPath, SlowCompilesAreNotScreenedWhenTheBudgetLeftIsOneCascade) {
  TimedWorker w("late_spent", 0.0);
  search::SearchOptions o = gpu_options(1500ms);
  o.cost.gpu = true;  // a cascade's estimate is then 2 s and more: nothing left for the slow compiles
  o.first_cascade_always = true;
  search::KernelOutcome out = search_with_a_slow_compile(w, o, 1500ms);
  size_t screens = 0;
  for (const json& r : w.requests()) screens += r["op"] == "screen";
  EXPECT_EQ(screens, 1u);
  const search::CandidateRecord* slow = nullptr;
  for (const auto& c : out.candidates)
    if (c.candidate.screen_last) slow = &c;
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->screen_error, "not screened: the budget was spent");
  EXPECT_FALSE(slow->result.has_value());
}

}  // namespace
}  // namespace kopt

namespace kopt {
namespace {

// The row merge of corpus/group_norm three times: timed at 0.9 of the baseline, at 0.6, and at 1.2 (slower).
struct TimedFusions : agents::Coder {
  std::vector<agents::Candidate> propose(const agents::KernelProfile&, const agents::Plan&) override { return {}; }
  agents::fusion::RegionPlan propose_region(const agents::RegionUnit& u) override {
    agents::fusion::RegionPlan plan = agents::fusion::plan_region(*u.art, *u.f, *u.region, u.winners);
    agents::fusion::RegionCandidate slow = plan.candidates.at(0), fast = slow, slower = slow;
    slow.id = "r1", slow.edit.source += "# fake-ratio: 0.9\n";
    fast.id = "r2", fast.edit.source += "# fake-ratio: 0.6\n";
    slower.id = "r3", slower.edit.source += "# fake-ratio: 1.2\n";
    plan.candidates = {slow, slower, fast};
    return plan;
  }
};

}  // namespace

TEST(SearchRegions, OnAGpuEveryCandidateIsScreenedTheFastestCascadedFirstAndTheOneSavingMostIsTaken) {
  TimedWorker w("regions", 0);
  auto b = testing::corpus("group_norm");
  TimedFusions coder;
  std::vector<search::KernelOutcome> outcomes;
  search::Cache cache{*w.db, {}};
  search::SearchOptions o = gpu_options(600s);
  auto rs = search::search_regions(*w.sup, *b, coder, outcomes, o, cache, [](const std::string&) {});
  ASSERT_EQ(rs.size(), 1u);
  const search::RegionOutcome& r = rs[0];
  ASSERT_EQ(r.tried.size(), 3u);
  // The slower one stops at its screen (G1 alone), before the others' cascades.
  EXPECT_EQ(r.tried[0].candidate.id, "r3");
  EXPECT_TRUE(r.tried[0].screened_out());
  EXPECT_NEAR(r.tried[0].screen_ratio.value_or(0), 1 / 1.2, 1e-6);
  ASSERT_EQ(r.tried[0].result.cascade.gates.size(), 1u);
  EXPECT_EQ(r.tried[0].result.cascade.gates[0].gate, "G1");
  // The others' cascades, the fastest screened first; the first accepted did not end the search: it was timed.
  EXPECT_EQ(r.tried[1].candidate.id, "r2");
  EXPECT_EQ(r.tried[2].candidate.id, "r1");
  for (size_t t = 1; t < 3; ++t) {
    EXPECT_TRUE(r.tried[t].result.cascade.accepted) << results::cascade_json(r.tried[t].result.cascade).dump(2);
    EXPECT_TRUE(r.tried[t].result.cascade.performance_measured);
  }
  ASSERT_TRUE(r.chosen);
  EXPECT_EQ(*r.chosen, 1u);
  EXPECT_NEAR(r.tried[1].result.saved_ms.value_or(0), 0.4, 1e-9);
  EXPECT_NE(r.note.find("saves 0.4000 ms"), std::string::npos) << r.note;
  // report.json says so.
  nlohmann::json j = search::region_json(r);
  EXPECT_EQ(j["candidates"][0]["outcome"], "screened_out");
  EXPECT_EQ(j["candidates"][1]["outcome"], "accepted");
  EXPECT_TRUE(j["candidates"][1]["screen_ratio"].is_number());
}

}  // namespace kopt

namespace kopt {

TEST(SearchCost, AScreenBatchHoldsWhatEndsInTimeForASlowKernel) {
  // A 192 ms split scan with 17.8 s to screen in: 16 candidates took 27.5 s on an H100 (session 32), and the
  // fastest (23x) then had no time for its cascade.
  int reps = search::screen_reps(10, 192.7);
  EXPECT_EQ(reps, 5);  // a second of launches
  size_t n = search::screen_batch_size(17.8, 192.7, reps, std::nullopt, 16);
  EXPECT_GE(n, 4u);
  EXPECT_LE(n, 10u);
  // The batch's own estimate ends inside the time given.
  double each = (reps + search::kScreenExtraLaunches) * 0.1927;
  EXPECT_LE(search::kScreenCompileSeconds + each + n * each, 17.8);
  // Microsecond kernels keep the full batch and reps, however little time is left (one compile wave);
  // a measured per-candidate cost replaces the guess.
  EXPECT_EQ(search::screen_reps(10, 0.05), 10);
  EXPECT_EQ(search::screen_batch_size(30, 0.05, 10, std::nullopt, 16), 16u);
  EXPECT_EQ(search::screen_batch_size(0.2, 0.05, 10, std::nullopt, 16), 16u);
  EXPECT_EQ(search::screen_batch_size(30, 0.05, 10, 5.0, 16), 5u);
  // With no time left the first batch still holds one (the caller stops before it when the budget is spent);
  // once a batch has measured a candidate's cost, none that would end past the time given (session 33: a
  // third batch of one ended 2 s into the time kept for the 23x candidate's cascade, which then did not run).
  EXPECT_EQ(search::screen_batch_size(0.5, 192.7, reps, std::nullopt, 16), 1u);
  EXPECT_EQ(search::screen_batch_size(1.7, 192.7, reps, 1.27, 16), 0u);
  EXPECT_EQ(search::screen_batch_size(6.0, 192.7, reps, 1.27, 16), 2u);
  // A measured mean below the baseline's own launches (fast templates in the batch) counts as those launches:
  // 7.5 s holds three more candidates of 1.54 s, not five of 0.94 s (session 34: five ended past the time).
  EXPECT_EQ(search::screen_batch_size(7.5, 192.7, reps, 0.94, 16), 3u);
}

}  // namespace kopt
