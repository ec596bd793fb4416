// Peak device memory as the engine reads it from its workers (worker/memory.h): a worker that
// answers `memory` gives a measured peak, the largest over every worker of a pool; one that does not
// know the op, a failed reply or fields of the wrong type give "not measured" and never an error.
#include <gtest/gtest.h>

#include "pipeline/bench_problem.h"
#include "worker/memory.h"
#include "worker/supervisor.h"

using nlohmann::json;
using namespace kopt::worker;
using namespace std::chrono_literals;

namespace {

SupervisorOptions fake(size_t n, bool memory) {
  SupervisorOptions o;
  o.argv = {"python3", std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/fake_worker.py"};
  o.slots.assign(n, "cpu");
  o.env["FAKE_MEMORY"] = memory ? "1" : "0";
  o.start_timeout = 30s;
  return o;
}

json measured(int64_t in_use, int64_t peak) {
  return {{"ok", true}, {"measured", true}, {"device", "cuda"}, {"in_use_bytes", in_use}, {"peak_bytes", peak}};
}

}  // namespace

TEST(Memory, BytesAreNonNegativeIntegralNumbers) {
  json j = {{"a", 12}, {"b", -1}, {"c", "12"}, {"d", 1.5e10}, {"e", 1.5}, {"f", nullptr}, {"g", 18446744073709551615ull}};
  EXPECT_EQ(bytes_of(j, "a"), 12);
  EXPECT_EQ(bytes_of(j, "b"), std::nullopt);
  EXPECT_EQ(bytes_of(j, "c"), std::nullopt);
  EXPECT_EQ(bytes_of(j, "d"), 15000000000LL);
  EXPECT_EQ(bytes_of(j, "e"), std::nullopt);
  EXPECT_EQ(bytes_of(j, "f"), std::nullopt);
  EXPECT_EQ(bytes_of(j, "g"), std::nullopt);
  EXPECT_EQ(bytes_of(j, "missing"), std::nullopt);
  EXPECT_EQ(bytes_of(json::array(), "a"), std::nullopt);
}

TEST(Memory, CombinedOverWorkersIsTheLargestAndMeasuredOnlyWhenAllAre) {
  MemoryReading r = combine_memory({measured(10, 100), measured(30, 70)});
  EXPECT_TRUE(r.measured);
  EXPECT_EQ(r.peak_bytes, 100);
  EXPECT_EQ(r.in_use_bytes, 30);
  // One worker in CPU mode (its own accounting) or failing: figures kept, not measured.
  json cpu = measured(5, 500);
  cpu["measured"] = false;
  r = combine_memory({measured(10, 100), cpu});
  EXPECT_FALSE(r.measured);
  EXPECT_EQ(r.peak_bytes, 500);
  r = combine_memory({measured(10, 100), {{"ok", false}, {"error", "KeyError: unknown op 'memory'"}}});
  EXPECT_FALSE(r.measured);
  EXPECT_EQ(r.peak_bytes, 100);
}

TEST(Memory, AReplyWithoutTheFieldsIsNotMeasured) {
  for (const json& reply : {json{{"ok", true}}, json{{"ok", true}, {"measured", true}},
                            json{{"ok", true}, {"measured", "yes"}, {"peak_bytes", "lots"}}, json(nullptr),
                            json{{"ok", false}, {"failure", "timeout"}}}) {
    MemoryReading r = combine_memory({reply});
    EXPECT_FALSE(r.measured) << reply.dump();
    EXPECT_FALSE(r.peak_bytes.has_value()) << reply.dump();
    json s = memory_summary(r, compiled_peak_of(reply));
    EXPECT_EQ(s, json({{"measured", false}, {"peak_bytes", nullptr}, {"compiled_peak_bytes", nullptr},
                       {"ratio", nullptr}, {"peak_request", nullptr}}));
  }
  EXPECT_FALSE(combine_memory({}).measured);
  // run_baseline without `memory`, or with a null peak: no compiled peak.
  EXPECT_EQ(compiled_peak_of(json{{"ok", true}, {"match", true}}), std::nullopt);
  EXPECT_EQ(compiled_peak_of(json{{"memory", {{"measured", false}, {"compiled_peak_bytes", nullptr}}}}), std::nullopt);
  EXPECT_EQ(compiled_peak_of(json{{"memory", {{"measured", true}, {"compiled_peak_bytes", 4096}}}}), 4096);
}

TEST(Memory, SummaryRatioIsPeakOverTorchCompilesOwn) {
  json s = memory_summary(combine_memory({measured(0, 300)}), 200);
  EXPECT_EQ(s["measured"], true);
  EXPECT_EQ(s["peak_bytes"], 300);
  EXPECT_EQ(s["compiled_peak_bytes"], 200);
  EXPECT_DOUBLE_EQ(s["ratio"].get<double>(), 1.5);
  EXPECT_TRUE(memory_summary(combine_memory({measured(0, 300)}), 0)["ratio"].is_null());
  EXPECT_TRUE(memory_summary(combine_memory({measured(0, 300)}), std::nullopt)["ratio"].is_null());
}

TEST(Memory, ThePeaksRequestIsTheLargestAnyWorkerReported) {
  json a = measured(0, 300), b = measured(0, 500), c = measured(0, 100);
  a["peak_request"] = {{"op", "run_kernel"}, {"peak_bytes", 300}};
  b["peak_request"] = {{"op", "run_baseline"}, {"peak_bytes", 500}};
  c["peak_request"] = {{"op", 7}, {"peak_bytes", 900}};  // malformed: ignored
  json s = memory_summary(combine_memory({a, b, c}), 200);
  EXPECT_EQ(s["peak_request"]["op"], "run_baseline");
  EXPECT_EQ(s["peak_request"]["peak_bytes"], 500);
  EXPECT_TRUE(memory_summary(combine_memory({measured(0, 300)}), 200)["peak_request"].is_null());
}

TEST(Memory, EveryWorkerOfAPoolIsAskedAndThePeakResets) {
  Supervisor s(fake(2, true));
  EXPECT_TRUE(s.call({{"op", "alloc"}, {"bytes", 1000}}, 10s).value("ok", false));  // the first idle worker
  std::vector<json> replies = s.call_each({{"op", "memory"}, {"reset_peak", false}}, 10s);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0]["peak_bytes"], 1000);  // the worker that allocated
  EXPECT_EQ(replies[1]["peak_bytes"], 0);
  MemoryReading r = read_memory(s, true);
  EXPECT_TRUE(r.measured);
  EXPECT_EQ(r.peak_bytes, 1000);
  EXPECT_EQ(r.in_use_bytes, 1000);
  EXPECT_TRUE(s.call({{"op", "alloc"}, {"bytes", 24}}, 10s).value("ok", false));
  EXPECT_EQ(read_memory(s, false).peak_bytes, 1024);
  EXPECT_EQ(s.replacements(), 0u);
}

TEST(Memory, AWorkerThatDoesNotKnowTheOpIsNotMeasured) {
  Supervisor s(fake(1, false));  // answers `memory` with {"ok": true} and nothing else
  MemoryReading r = read_memory(s, true);
  EXPECT_FALSE(r.measured);
  EXPECT_FALSE(r.peak_bytes.has_value());
  EXPECT_EQ(s.replacements(), 0u);
}

TEST(Memory, AnOomReplyIsAnOomFailureKeepingItsText) {
  json reply = {{"ok", false}, {"failure", "oom"},
                {"error", "out of memory in run_module: needs 12.0 GiB, 3.1 GiB free (budget 130.0 GiB); try a "
                          "smaller batch"},
                {"oom", {{"stage", "run_module"}, {"needed_bytes", 12884901888LL}, {"free_bytes", nullptr}}}};
  EXPECT_EQ(kopt::pipeline::failure_kind("the result did not run: a reason that names nothing", reply), "oom");
  EXPECT_EQ(kopt::pipeline::failure_kind(reply["error"].get<std::string>()), "oom");
  EXPECT_EQ(kopt::pipeline::failure_kind("x", json{{"failure", "crashed"}}), "crash");
  EXPECT_EQ(kopt::pipeline::failure_kind("no reply within 10 ms", json{{"failure", "timeout"}}), "timeout");
  EXPECT_EQ(kopt::pipeline::failure_kind("fails to import", json{{"failure", 3}}), "import");
  EXPECT_EQ(kopt::pipeline::failure_kind("fails to import", json()), "import");
}
