// Regions of the host function (profile/regions.h) on real captured bundles: where they split (vendor
// calls), which buffers are internal (written and read only inside), and the region floor's bytes.
#include "profile/regions.h"

#include <gtest/gtest.h>

#include "test_util.h"

using namespace kopt;
using kopt::testing::corpus;

namespace {

struct Found {
  std::vector<profile::Region> regions;
  std::vector<std::vector<std::string>> kernels;
};

Found regions_of(const std::string& bundle) {
  auto b = corpus(bundle);
  const ir::Artifact& a = *b->graphs.at(0);
  const ir::Function& f = *a.entry_function();
  Found out{profile::regions(a, f, b->meta["graphs"][0]["args"]), {}};
  for (const auto& r : out.regions) {
    auto& names = out.kernels.emplace_back();
    for (size_t i : r.launches) names.push_back(a.kernels[f.launches[i].kernel].name);
  }
  return out;
}

TEST(ProfileRegions, AFlippedScanAndItsFlipAreOneRegionWithTheScanOutputInternal) {
  // reverse_cumsum: scan kernel -> buf0 -> flip kernel -> buf1 (returned).
  Found f = regions_of("reverse_cumsum");
  ASSERT_EQ(f.regions.size(), 1u);
  const auto& r = f.regions[0];
  EXPECT_EQ(r.launches.size(), 2u);
  EXPECT_EQ(profile::names(r.inputs), std::vector<std::string>{"arg0_1"});
  EXPECT_EQ(profile::names(r.outputs), std::vector<std::string>{"buf1"});
  EXPECT_EQ(profile::names(r.internal), std::vector<std::string>{"buf0"});
  // 64 x 1024 float32 each: the region reads the input once and writes the output once.
  EXPECT_EQ(r.floor_bytes(), 2u * 64 * 1024 * 4);
  EXPECT_EQ(r.internal_bytes(), 64u * 1024 * 4);
}

TEST(ProfileRegions, GroupNormStatisticsAreInternalToTheNormalization) {
  Found f = regions_of("group_norm");
  ASSERT_EQ(f.regions.size(), 1u);
  const auto& r = f.regions[0];
  EXPECT_EQ(profile::names(r.internal), (std::vector<std::string>{"buf0", "buf1"}));
  EXPECT_EQ(profile::names(r.outputs), std::vector<std::string>{"buf3"});
  EXPECT_EQ(profile::names(r.inputs), (std::vector<std::string>{"arg2_1", "arg0_1", "arg1_1"}));
  EXPECT_EQ(r.floor_bytes(), (2u * 4 * 64 * 16 * 16 + 2 * 64) * 4);
}

TEST(ProfileRegions, AVendorCallSplitsRegionsAndWhatItReadsIsAnOutput) {
  // conv_bn_relu: two layout copies feed cuDNN's convolution, whose output the third kernel reads.
  Found f = regions_of("conv_bn_relu");
  ASSERT_EQ(f.regions.size(), 2u);
  EXPECT_EQ(f.kernels[0].size(), 2u);
  EXPECT_EQ(f.kernels[1].size(), 1u);
  EXPECT_EQ(names(f.regions[0].outputs), (std::vector<std::string>{"buf0", "buf1"}));
  EXPECT_TRUE(f.regions[0].internal.empty());
  EXPECT_EQ(names(f.regions[1].inputs).front(), "buf2");  // the convolution's output
  EXPECT_EQ(f.regions[1].inputs.front().bytes, 2u * 32 * 32 * 32 * 4);  // its assert's size, read as fp32
  EXPECT_EQ(names(f.regions[1].outputs), std::vector<std::string>{"buf3"});
}

TEST(ProfileRegions, AReusedBufferAndALossScalarResolveToTheirStorage) {
  // cross_entropy: `buf4 = buf2; del buf2  # reuse`, the loss written to buf4 and returned.
  Found f = regions_of("cross_entropy");
  ASSERT_EQ(f.regions.size(), 1u);
  const auto& r = f.regions[0];
  EXPECT_EQ(profile::names(r.outputs), std::vector<std::string>{"buf2"});
  EXPECT_EQ(profile::names(r.internal), (std::vector<std::string>{"buf0", "buf1"}));
  EXPECT_EQ(r.outputs[0].bytes, 4u);  // a 0-d float32
}

TEST(ProfileRegions, EveryCorpusBundleSplitsIntoRegionsCoveringEveryLaunchOnce) {
  for (const char* name : {"transformer_block", "small_convnet", "linear_gelu", "softmax_lastdim", "mean_dim0"}) {
    auto b = corpus(name);
    for (size_t g = 0; g < b->graphs.size(); ++g) {
      const ir::Artifact& a = *b->graphs[g];
      const ir::Function& f = *a.entry_function();
      size_t covered = 0;
      for (const auto& r : profile::regions(a, f, b->meta["graphs"][g]["args"])) {
        covered += r.launches.size();
        EXPECT_FALSE(r.outputs.empty()) << name;  // a region that writes nothing read later would be dead code
      }
      EXPECT_EQ(covered, f.launches.size()) << name;
    }
  }
}

}  // namespace
