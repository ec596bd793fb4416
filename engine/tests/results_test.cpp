// The results database keeps ceilings per GPU and versions across reopening,
// and appends records; the search's cache key and a cascade's stored record keep
// their form (a database written before reads back the same).
#include <gtest/gtest.h>

#include <filesystem>

#include "results/db.h"
#include "results/key.h"
#include "results/record.h"
#include "util/error.h"

using kopt::results::ResultsDb;
using nlohmann::json;

TEST(ResultsDb, CeilingsPersistPerGpuAndVersions) {
  auto path = std::filesystem::temp_directory_path() / "kopt_results_db_test" / "r.db";
  std::filesystem::remove_all(path.parent_path());
  nlohmann::json c = {{"copy_bytes_per_s", 4.25e12}, {"matmul_flops_per_s", {{"bf16", 7.9e14}}}};
  {
    ResultsDb db(path.string());
    EXPECT_FALSE(db.ceilings("NVIDIA H200", "2.11.0", "3.6.0"));
    db.put_ceilings("NVIDIA H200", "2.11.0", "3.6.0", c);
    db.add_record("baseline", "bundle-a", {{"match", true}});
    db.add_record("baseline", "bundle-b", {{"match", false}});
  }
  ResultsDb db(path.string());
  auto got = db.ceilings("NVIDIA H200", "2.11.0", "3.6.0");
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["copy_bytes_per_s"], 4.25e12);
  EXPECT_FALSE(db.ceilings("NVIDIA H200", "2.12.0", "3.6.0"));  // other versions measure again
  EXPECT_EQ(db.count_records("baseline"), 2u);
  std::filesystem::remove_all(path.parent_path());
}

TEST(ResultsDb, UnwritablePathIsAUserError) {
  EXPECT_THROW(ResultsDb("/proc/definitely/not/writable.db"), kopt::UserError);
}

TEST(ResultsKey, PrefixKernelShapesCandidate) {
  std::vector<json> launches = {{{"args", json::array({1, 2})}, {"grid", 3}}, {{"name", "no args"}}};
  EXPECT_EQ(kopt::results::cache_key("H200|2.11|3.6", "src", launches, "c0ffee"),
            "H200|2.11|3.6|" + kopt::verify::source_hash("src") + "|" + kopt::verify::source_hash("[[1,2],[]]") +
                "|c0ffee");
}

TEST(ResultsRecord, CascadeResultRoundTrips) {
  kopt::verify::CascadeResult r;
  r.accepted = true, r.performance_measured = true, r.kernel = "triton_poi_0", r.candidate_hash = "00ff";
  using kopt::verify::GateStatus;
  r.gates = {{"G1", GateStatus::passed, {{"findings", json::array()}}},
             {"G4", GateStatus::not_measured, {{"speedup", 1.5}}}};
  json j = kopt::results::cascade_json(r);
  EXPECT_EQ(j, json({{"kernel", "triton_poi_0"}, {"candidate_hash", "00ff"}, {"accepted", true},
                     {"performance_measured", true},
                     {"gates", {{{"gate", "G1"}, {"status", "passed"}, {"evidence", {{"findings", json::array()}}}},
                                {{"gate", "G4"}, {"status", "not_measured"}, {"evidence", {{"speedup", 1.5}}}}}}}));
  EXPECT_EQ(kopt::results::cascade_json(kopt::results::cascade_from_json(j)), j);
  // A status no kernelopt writes is one line naming it, not a silently wrong record.
  j["gates"][1]["status"] = "skipped";
  EXPECT_THROW(kopt::results::cascade_from_json(j), kopt::UserError);
}
