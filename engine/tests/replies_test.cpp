// The worker's replies parsed in one place (worker/replies.h), and the status and outcome names that
// reports and the results database carry.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search/outcome.h"
#include "verify/gate_status.h"
#include "verify/rules.h"
#include "worker/replies.h"

using namespace kopt;
using nlohmann::json;

namespace {

// The ReplyError's message for `parse` on `raw`, or "" when it parsed.
template <class F>
std::string reply_error(F parse, const json& raw) {
  try {
    parse(raw);
  } catch (const worker::ReplyError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GateStatus, EveryValueRoundTripsThroughItsText) {
  for (auto s : {verify::GateStatus::passed, verify::GateStatus::failed, verify::GateStatus::not_measured}) {
    EXPECT_EQ(verify::parse_gate_status(verify::to_string(s)), s) << verify::to_string(s);
    EXPECT_EQ(json(s), std::string(verify::to_string(s)));  // JSON holds the text, never the number
  }
  EXPECT_EQ(verify::to_string(verify::GateStatus::not_measured), "not_measured");
  EXPECT_FALSE(verify::parse_gate_status("Passed").has_value());
  EXPECT_FALSE(verify::parse_gate_status("").has_value());
}

TEST(CandidateOutcome, EveryValueRoundTripsThroughItsText) {
  using search::Outcome;
  for (auto o : {Outcome::not_run, Outcome::screened_out, Outcome::accepted, Outcome::rejected}) {
    EXPECT_EQ(search::parse_outcome(search::to_string(o)), o) << search::to_string(o);
    EXPECT_EQ(json(o), std::string(search::to_string(o)));
  }
  EXPECT_EQ(search::to_string(Outcome::screened_out), "screened_out");
  EXPECT_FALSE(search::parse_outcome("screened out").has_value());
}

TEST(WorkerReplies, AMissingFieldIsOneLineNamingTheOpAndTheField) {
  std::string e = reply_error(worker::parse_run_kernel, json{{"ok", true}, {"comparison", json::object()}});
  EXPECT_EQ(e, "the worker's run_kernel reply lacks 'match'");
  // Nested fields are named by their path.
  json timed = {{"ok", true}, {"measured", true}, {"candidate", json::object()},
                {"baseline", {{"median_ms", 1.0}, {"p20_ms", 1.0}, {"p80_ms", 1.0}, {"synced", json::object()}}}};
  EXPECT_EQ(reply_error(worker::parse_time_kernel, timed), "the worker's time_kernel reply lacks 'baseline.synced.median_ms'");
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(WorkerReplies, AFieldOfAnotherTypeIsNamedWithBothTypes) {
  std::string e = reply_error(worker::parse_run_kernel, json{{"ok", true}, {"match", "yes"}, {"comparison", json::object()}});
  EXPECT_EQ(e, "the worker's run_kernel reply has 'match' as string, not a boolean");
  json screen = {{"ok", true}, {"baseline", {{"median_ms", 1.0}}}, {"candidates", json::array({{{"ok", true}}})}};
  EXPECT_EQ(reply_error(worker::parse_screen, screen), "the worker's screen reply lacks 'candidates[0].median_ms'");
}

TEST(WorkerReplies, AFailedReplyParsesAsNotOkAndKeepsItsRecord) {
  // The supervisor's record of a worker that timed out: nothing of run_kernel's is required of it.
  json failure = {{"ok", false}, {"failure", "timeout"}, {"error", "no reply in 600 s"}, {"stderr_tail", "..."}};
  worker::RunKernelReply r = worker::parse_run_kernel(failure);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.raw, failure);
  EXPECT_TRUE(verify::failed_reply(r));
  json ev = verify::reply_evidence(r);
  EXPECT_EQ(ev["failure"], "timeout");
  EXPECT_EQ(ev["worker_replaced"], true);
}

TEST(WorkerReplies, OptionalFieldsTakeTheirDefaultsAndTheRawReplyIsKept) {
  json raw = {{"ok", true}, {"match", false}, {"comparison", {{"args", json::array()}}}, {"extra", 1}};
  worker::RunKernelReply r = worker::parse_run_kernel(raw);
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.match);
  EXPECT_FALSE(r.rounding_only);
  EXPECT_FALSE(r.deterministic.has_value());
  EXPECT_EQ(r.raw, raw);
  // A CPU worker's time_kernel: not measured, with its reason, and no timings required.
  worker::TimedReply t = worker::parse_time_kernel({{"ok", true}, {"measured", false}, {"reason", "CPU mode"}});
  EXPECT_FALSE(t.measured);
  EXPECT_EQ(t.reason, "CPU mode");
  // run_module's float64 comparisons are required only when asked for.
  json rm = {{"ok", true}, {"vs_baseline", {{"ok", true}}}};
  EXPECT_TRUE(worker::parse_run_module(rm, false).within_tolerance());
  EXPECT_EQ(reply_error([](const json& j) { return worker::parse_run_module(j, true); }, rm),
            "the worker's run_module reply lacks 'candidate_vs_fp64'");
}

TEST(WorkerReplies, AFloat64RunLeftToG3SaysWhyAndOneMadeCarriesItsComparison) {
  json deferred = {{"ok", true}, {"deferred", "the float64 model needs 44 GiB ... on the host's CPUs"}, {"need_bytes", 1}};
  worker::RunFp64Reply d = worker::parse_run_fp64(deferred);
  EXPECT_TRUE(d.ok);
  EXPECT_NE(d.deferred.find("host's CPUs"), std::string::npos);
  EXPECT_TRUE(d.baseline_vs_fp64.is_null());
  worker::RunFp64Reply m = worker::parse_run_fp64(json{{"ok", true}, {"baseline_vs_fp64", {{"outputs", json::array()}}}});
  EXPECT_TRUE(m.deferred.empty());
  EXPECT_TRUE(m.baseline_vs_fp64.is_object());
  // Neither: the comparison is required.
  EXPECT_EQ(reply_error(worker::parse_run_fp64, json{{"ok", true}}), "the worker's run_fp64 reply lacks 'baseline_vs_fp64'");
  EXPECT_EQ(reply_error(worker::parse_run_fp64, json{{"ok", true}, {"deferred", 3}}),
            "the worker's run_fp64 reply has 'deferred' as number, not a string");
}
