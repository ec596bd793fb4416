// The real worker in CPU mode under the supervisor, on a corpus bundle: a
// candidate kernel that raises, one that never ends, and one that kills its
// process each become a failed request with a reason, and the next request on
// the same supervisor succeeds (the raising one without even a restart).
#include <gtest/gtest.h>

#include "artifact/bundle.h"
#include "worker/supervisor.h"

using namespace kopt;
using namespace std::chrono_literals;

namespace {

const std::string kBundle = std::string(KOPT_SOURCE_DIR) + "/corpus/softmax_lastdim";

worker::SupervisorOptions real_worker() {
  worker::SupervisorOptions o;
  o.argv = {"python3", "-m", "kernelopt.worker"};
  o.env["PYTHONPATH"] = std::string(KOPT_SOURCE_DIR) + "/python";
  o.slots = {"cpu"};
  return o;
}

// The kernel's source with `stmt` inserted as the first statement of its body.
std::string with_first_statement(const ir::Kernel& k, const std::string& stmt) {
  std::string src = k.source;
  size_t def = src.find("def " + k.entry + "(");
  size_t body = src.find(":\n", def) + 2;
  return src.insert(body, "    " + stmt + "\n");
}

nlohmann::json run_kernel(worker::Supervisor& s, const ir::Kernel& k, const std::string& source,
                          std::chrono::milliseconds timeout) {
  return s.call({{"op", "run_kernel"}, {"bundle", kBundle}, {"kernel", k.name}, {"source", source}}, timeout);
}

}  // namespace

TEST(WorkerIsolation, RaiseLoopAndKillAreContained) {
  auto bundle = ir::load_bundle(kBundle);
  const ir::Kernel& k = bundle->graphs[0]->kernels.at(0);
  worker::Supervisor s(real_worker());

  auto ok = s.call({{"op", "run_kernel"}, {"bundle", kBundle}, {"kernel", k.name}}, 120s);
  ASSERT_TRUE(ok.value("ok", false)) << ok.dump();
  EXPECT_TRUE(ok.value("match", false));
  int pid = s.hellos()[0]["pid"];

  // Raises inside the kernel: an ordinary failed reply; the same process carries on.
  auto raised = run_kernel(s, k, with_first_statement(k, "tl.static_assert(xnumel < 0, 'planted failure')"), 120s);
  EXPECT_FALSE(raised.value("ok", true));
  EXPECT_FALSE(raised.contains("failure"));
  EXPECT_EQ(s.replacements(), 0u);
  auto again = s.call({{"op", "hello"}}, 30s);
  EXPECT_EQ(again["pid"].get<int>(), pid);

  // Never ends: timed out, killed, replaced.
  auto looped = run_kernel(s, k, with_first_statement(k, "while xnumel > 0:\n        xnumel = xnumel + 1"), 5s);
  EXPECT_EQ(looped["failure"], "timeout");
  EXPECT_EQ(s.replacements(), 1u);

  // Kills its process while loading: crashed, replaced.
  auto killed = run_kernel(s, k, "import os\nos._exit(7)\n" + k.source, 120s);
  EXPECT_EQ(killed["failure"], "crashed");
  EXPECT_EQ(s.replacements(), 2u);

  // And the next request succeeds.
  auto after = s.call({{"op", "run_kernel"}, {"bundle", kBundle}, {"kernel", k.name}}, 120s);
  EXPECT_TRUE(after.value("ok", false)) << after.dump();
  EXPECT_TRUE(after.value("match", false));
}
