// Every real captured bundle in corpus/: it loads, its IR is consistent (every
// launch resolves to a kernel whose runtime parameters it binds exactly), and
// stitching is exact (no replacement: byte-identical; a kernel replaced by its
// own source: the same kernels come back).
#include <gtest/gtest.h>

#include "test_util.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "artifact/bundle.h"
#include "stitch/stitch.h"

namespace fs = std::filesystem;
using namespace kopt;

namespace {

std::vector<std::string> corpus_bundles() {
  std::vector<std::string> out;
  fs::path root = fs::path(KOPT_SOURCE_DIR) / "corpus";
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "meta.json")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

using kopt::testing::read;

}  // namespace

TEST(Corpus, HasAtLeastFifteenBundles) { EXPECT_GE(corpus_bundles().size(), 15u); }

TEST(Corpus, CoversTheKernelFamilies) {
  std::set<std::string> kinds, externs;
  for (const std::string& dir : corpus_bundles()) {
    auto b = ir::load_bundle(dir);
    for (const auto& g : b->graphs) {
      for (const auto& k : g->kernels) kinds.insert(k.kind);
      for (const auto& f : g->functions)
        for (const auto& e : f.externs) externs.insert(e.op);
    }
  }
  for (const char* kind : {"pointwise", "reduction", "persistent_reduction", "template"})
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " kernel in the corpus";
  for (const char* op : {"extern_kernels.mm", "extern_kernels.bmm", "extern_kernels.addmm", "extern_kernels.convolution"})
    EXPECT_TRUE(externs.count(op)) << "no " << op << " in the corpus";
}

TEST(Corpus, EveryBundleIsConsistentAndStitchesExactly) {
  for (const std::string& dir : corpus_bundles()) {
    SCOPED_TRACE(dir);
    auto b = ir::load_bundle(dir);
    ASSERT_EQ(b->graphs.size(), b->meta["graphs"].size());
    for (size_t gi = 0; gi < b->graphs.size(); ++gi) {
      const ir::Artifact& a = *b->graphs[gi];
      const ir::Function* entry = a.entry_function();
      ASSERT_NE(entry, nullptr);
      EXPECT_EQ(entry->inputs.size(), b->meta["graphs"][gi]["args"].size()) << "call() args vs meta.json";
      for (const auto& f : a.functions) {
        for (const auto& l : f.launches) {
          const ir::Kernel& k = a.kernels.at(l.kernel);
          size_t runtime_params = 0;
          for (const auto& p : k.signature) runtime_params += !p.is_constexpr;
          EXPECT_EQ(l.bound.size(), runtime_params) << k.name;
          if (k.kind != "template") EXPECT_TRUE(l.extra.empty()) << k.name;
        }
      }
      for (const auto& k : a.kernels) EXPECT_GE(k.launch_count, 1u) << k.name << " is declared but never launched";
      EXPECT_EQ(stitch::stitch(a, {}), read(a.path));
      std::vector<stitch::Replacement> same;
      for (const auto& k : a.kernels) same.push_back({k.name, k.source, "self"});
      auto again = ir::build(stitch::stitch(a, same), "again.py");
      ASSERT_EQ(again->kernels.size(), a.kernels.size());
      for (size_t i = 0; i < a.kernels.size(); ++i) EXPECT_EQ(again->kernels[i].source, a.kernels[i].source);
    }
  }
}
