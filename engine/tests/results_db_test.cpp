// The results database keeps ceilings per GPU and versions across reopening,
// and appends records.
#include <gtest/gtest.h>

#include <filesystem>

#include "report/results_db.h"
#include "util/error.h"

using kopt::report::ResultsDb;

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
