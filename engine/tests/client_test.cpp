// The worker client's requests, field for field as docs/protocol.md names them (only the fields set are
// sent, so the worker's defaults apply to the rest), and its calls against the fake worker.
#include <gtest/gtest.h>

#include "worker/client.h"

using namespace kopt::worker;
using namespace std::chrono_literals;
using nlohmann::json;

TEST(WorkerClient, RunKernelSendsOnlyWhatIsSet) {
  RunKernelRequest r{.at = {"/b", 1, "triton_k"}, .source = "src", .poison = {2}, .tolerances = {{"atol", 1}}};
  EXPECT_EQ(r.to_json(), json({{"op", "run_kernel"}, {"bundle", "/b"}, {"graph", 1}, {"kernel", "triton_k"},
                               {"launch", 0}, {"source", "src"}, {"poison", {2}}, {"poison_fill", "nan"},
                               {"tolerances", {{"atol", 1}}}}));
  r.launch = 3, r.poison_fill = "garbage", r.seed = 0, r.inputs = "special", r.repeat = true, r.scratch = {4, 5};
  json j = r.to_json();
  EXPECT_EQ(j["launch"], 3);
  EXPECT_EQ(j["poison_fill"], "garbage");
  EXPECT_EQ(j["seed"], 0);  // seed 0 is a seed, not "unset"
  EXPECT_EQ(j["inputs"], "special");
  EXPECT_EQ(j["repeat"], true);
  EXPECT_EQ(j["scratch"], json({4, 5}));
}

TEST(WorkerClient, KernelRequests) {
  KernelAt at{"/b", 0, "k"};
  EXPECT_EQ((CompileKernelRequest{at, "s"}.to_json()),
            json({{"op", "compile_kernel"}, {"bundle", "/b"}, {"graph", 0}, {"kernel", "k"}, {"launch", 0},
                  {"source", "s"}}));
  EXPECT_EQ((TimeKernelRequest{at, "s", 7, {1}}.to_json()),
            json({{"op", "time_kernel"}, {"bundle", "/b"}, {"graph", 0}, {"kernel", "k"}, {"source", "s"},
                  {"reps", 7}, {"poison", {1}}}));
  EXPECT_EQ((ScreenRequest{.at = at, .sources = {"a", "b"}}.to_json()),
            json({{"op", "screen"}, {"bundle", "/b"}, {"graph", 0}, {"kernel", "k"}, {"sources", {"a", "b"}},
                  {"reps", 10}, {"poison", json::array()}}));
}

TEST(WorkerClient, ModuleRequests) {
  // Every graph's modules, or one graph's: `graph` goes with `source` only; `fp64` only when asked.
  EXPECT_EQ((RunModuleRequest{.bundle = "/b", .sources = std::vector<std::string>{"m"}, .tolerances = {}}.to_json()),
            json({{"op", "run_module"}, {"bundle", "/b"}, {"sources", {"m"}}, {"tolerances", nullptr}}));
  EXPECT_EQ((RunModuleRequest{.bundle = "/b", .source = "m", .graph = 2, .fp64 = true, .tolerances = 1}.to_json()),
            json({{"op", "run_module"}, {"bundle", "/b"}, {"source", "m"}, {"graph", 2}, {"fp64", true},
                  {"tolerances", 1}}));
  EXPECT_EQ((TimeModuleRequest{"/b", {"m"}}.to_json()),
            json({{"op", "time_module"}, {"bundle", "/b"}, {"sources", {"m"}}, {"reps", 50}}));
  EXPECT_EQ(ProfileRequest{"/b"}.to_json(), json({{"op", "profile"}, {"bundle", "/b"}, {"reps", 20}}));
  BenchTimesRequest bt{"/b"};
  EXPECT_EQ(bt.to_json(), json({{"op", "bench_times"}, {"bundle", "/b"}, {"reps", 30}}));
  bt.sources = std::vector<std::string>{"m"};
  EXPECT_EQ(bt.to_json()["sources"], json({"m"}));
  EXPECT_EQ(MemoryRequest{}.to_json(), json({{"op", "memory"}, {"reset_peak", false}}));
  EXPECT_EQ(bundle_request("run_fp64", "/b"), json({{"op", "run_fp64"}, {"bundle", "/b"}}));
}

TEST(WorkerClient, CallsReachTheWorker) {
  SupervisorOptions o;
  o.argv = {"python3", std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/fake_worker.py"};
  o.env = {{"FAKE_MEMORY", "1"}};
  o.slots.assign(2, "cpu");
  o.start_timeout = 30s;
  Supervisor s(o);
  // The fake worker echoes the op it does not know: each function sends its own.
  EXPECT_EQ(load_bundle(s, "/b", 10s).raw["op"], "load_bundle");
  EXPECT_EQ(ceilings(s, 10s).raw["op"], "ceilings");
  EXPECT_EQ(time_module(s, {"/b", {"m"}}, 10s).raw["op"], "time_module");  // measured false: nothing required
  // The echo lacks what these replies must hold: the parse says which op and which field.
  EXPECT_THROW(
      {
        try {
          run_baseline(s, "/b", 10s);
        } catch (const ReplyError& e) {
          EXPECT_STREQ(e.what(), "the worker's run_baseline reply lacks 'match'");
          throw;
        }
      },
      ReplyError);
  EXPECT_THROW(record_launches(s, "/b", 10s), ReplyError);
  std::vector<json> mem = memory(s, {.reset_peak = true}, 10s);
  ASSERT_EQ(mem.size(), 2u);  // one reply per worker
  EXPECT_TRUE(mem[0].value("measured", false));
  EXPECT_EQ(forget_bundles(s, 10s).raw["forgotten"], 0);
}
