// GPU tier (run on the H200, not in CI): the real worker on a GPU under the
// supervisor. A candidate with an illegal memory access poisons the CUDA
// context: the worker answers `fatal`, is replaced, and the run goes on; a
// kernel that never finishes is killed at its timeout and replaced.
#include <gtest/gtest.h>

#include "artifact/bundle.h"
#include "worker/supervisor.h"

using namespace kopt;
using namespace std::chrono_literals;

namespace {

// The checkout may sit elsewhere on the GPU machine than where this was built.
std::string source_dir() {
  const char* d = std::getenv("KOPT_SOURCE_DIR");
  return d && *d ? d : KOPT_SOURCE_DIR;
}

const std::string kBundle = source_dir() + "/corpus/softmax_large";

worker::SupervisorOptions gpu_worker() {
  worker::SupervisorOptions o;
  const char* py = std::getenv("KERNELOPT_PYTHON");
  o.argv = {py && *py ? py : "python3", "-m", "kernelopt.worker"};
  o.env["PYTHONPATH"] = source_dir() + "/python";
  o.slots = {"0"};
  return o;
}

nlohmann::json run(worker::Supervisor& s, const ir::Kernel& k, const std::string* source,
                   std::chrono::milliseconds timeout) {
  nlohmann::json req = {{"op", "run_kernel"}, {"bundle", kBundle}, {"kernel", k.name}};
  if (source) req["source"] = *source;
  return s.call(req, timeout);
}

}  // namespace

TEST(GpuWorker, IllegalAddressAndHangAreContained) {
  auto bundle = ir::load_bundle(kBundle);
  const ir::Kernel& k = bundle->graphs[0]->kernels.at(0);
  worker::Supervisor s(gpu_worker());
  ASSERT_EQ(s.hellos()[0]["device"], "cuda");

  auto ok = run(s, k, nullptr, 300s);
  ASSERT_TRUE(ok.value("ok", false)) << ok.dump();
  EXPECT_TRUE(ok.value("match", false));

  // Store 2^40 elements past the output: an illegal address on any GPU.
  std::string bad = k.source;
  size_t store = bad.rfind("tl.store(");
  size_t plus = bad.find(" + (", store);
  bad.insert(plus, " + 1099511627776");
  auto faulted = run(s, k, &bad, 300s);
  EXPECT_FALSE(faulted.value("ok", true));
  EXPECT_TRUE(faulted.value("fatal", false)) << faulted.dump();
  EXPECT_NE(faulted.value("error", "").find("illegal memory access"), std::string::npos) << faulted.dump();
  EXPECT_EQ(s.replacements(), 1u);

  // Never finishes on the GPU: killed at the timeout, replaced.
  std::string spin = k.source;
  size_t def = spin.find("def " + k.entry + "(");
  size_t body = spin.find(":\n", def) + 2;
  // Bounded in [0, 999] so it never ends (no overflow exit); the atomic (which changes nothing)
  // is a side effect, so the compiler cannot delete the loop as dead code.
  spin.insert(body, "    spin = 0\n    while spin >= 0:\n        spin = (spin + 1) % 1000\n"
                    "        tl.atomic_max(in_ptr0, float('-inf'))\n");
  auto hung = run(s, k, &spin, 20s);
  EXPECT_EQ(hung["failure"], "timeout") << hung.dump();
  EXPECT_EQ(s.replacements(), 2u);

  auto after = run(s, k, nullptr, 300s);
  EXPECT_TRUE(after.value("ok", false)) << after.dump();
  EXPECT_TRUE(after.value("match", false));
}
