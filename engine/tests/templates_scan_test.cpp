// The scan and min/max/arg-reduction templates on real corpus kernels: which kernels
// they apply to (and pass G1 on), and which they decline, with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agents/agent.h"
#include "agents/coder/templates/templates.h"
#include "artifact/bundle.h"
#include "profile/family.h"
#include "verify/static/g1.h"

namespace fs = std::filesystem;
using namespace kopt;
using nlohmann::json;

namespace {

std::unique_ptr<ir::Bundle> corpus(const std::string& name) {
  return ir::load_bundle((fs::path(KOPT_SOURCE_DIR) / "corpus" / name).string());
}

json tensor(std::vector<int64_t> shape, std::string dtype = "float32") {
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  return {{"shape", shape}, {"stride", stride}, {"dtype", dtype}};
}

json value(int64_t v) { return {{"value", v}}; }

agents::KernelProfile profile_of(const ir::Bundle& b, size_t kernel, std::vector<json> args) {
  agents::KernelProfile p;
  p.kernel = &b.graphs[0]->kernels.at(kernel);
  p.family = profile::family(*p.kernel);
  p.launches = {{{"args", args}}};
  return p;
}

// KOPT_DUMP_TEMPLATES=DIR writes each first instance for reading.
void dump(const std::string& name, const std::vector<agents::Candidate>& cands) {
  const char* dir = std::getenv("KOPT_DUMP_TEMPLATES");
  if (!dir || cands.empty()) return;
  std::ofstream(fs::path(dir) / (name + ".py")) << cands.front().source;
}

}  // namespace

TEST(ScanRowsTemplate, AppliesToCumsumCumprodAndReversedScans) {
  struct Case {
    const char* bundle;
    int64_t rows, cols;
  };
  for (Case c : {Case{"cumsum_lastdim", 64, 1024}, Case{"cumprod_lastdim", 128, 256}, Case{"reverse_cumsum", 64, 1024}}) {
    auto b = corpus(c.bundle);
    auto p = profile_of(*b, 0, {tensor({c.rows, c.cols}), tensor({c.rows, c.cols}), value(c.rows), value(c.cols)});
    ASSERT_EQ(p.family, "scan") << c.bundle;
    std::string why;
    auto cands = agents::templates::instantiate(p, &why);
    ASSERT_FALSE(cands.empty()) << c.bundle << ": " << why;
    dump(std::string("scan_rows_") + c.bundle, cands);
    // The first instance loops over chunks with a carried prefix, combined by the kernel's own function.
    EXPECT_NE(cands.front().source.find("for r0_offset in tl.range(R0_BLOCK"), std::string::npos) << c.bundle;
    EXPECT_NE(cands.front().source.find("kopt_carry = _triton_helper_fn_"), std::string::npos) << c.bundle;
    for (const auto& cand : cands) {
      EXPECT_EQ(cand.origin, "template:scan");
      EXPECT_TRUE(verify::run_g1(*p.kernel, cand.source).passed) << c.bundle << " " << cand.description;
    }
  }
}

TEST(ScanRowsTemplate, DeclinesWhatItDoesNotHandle) {
  std::string why;
  // A split scan (its workspace protocol is Inductor's), and a launch whose row length differs.
  auto big = corpus("cumsum_long_large");
  auto p = profile_of(*big, 0, {tensor({4, 2097152}), tensor({4, 2097152}), tensor({262144}, "uint8"), value(4),
                                value(2097152)});
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  auto b = corpus("cumsum_lastdim");
  p = profile_of(*b, 0, {tensor({64, 2048}), tensor({64, 2048}), value(64), value(2048)});
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("row length"), std::string::npos) << why;
  // A kernel with a reduction beside the scan: the chunks would cut it.
  ir::Kernel k = b->graphs[0]->kernels.at(0);
  size_t at = k.source.find("    tl.store(");
  k.source.insert(at, "    tmp9 = tl.sum(tmp2, 1)[:, None]\n");
  p.kernel = &k;
  p.launches = {{{"args", {tensor({64, 1024}), tensor({64, 1024}), value(64), value(1024)}}}};
  EXPECT_TRUE(agents::templates::instantiate(p, &why).empty());
  EXPECT_NE(why.find("not elementwise"), std::string::npos) << why;
}
