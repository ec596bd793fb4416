// The supervisor against a worker that hangs, dies, writes garbage, leaves
// children behind or reports a dead CUDA context: each becomes a failure record,
// the worker is replaced, and the next request succeeds.
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>

#include <thread>

#include "util/gpu_env.h"
#include "worker/supervisor.h"

using namespace kopt::worker;
using namespace std::chrono_literals;

namespace {

SupervisorOptions fake(size_t n = 1) {
  SupervisorOptions o;
  o.argv = {"python3", std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/fake_worker.py"};
  o.slots.assign(n, "cpu");
  o.start_timeout = 30s;
  return o;
}

// Running (a zombie waiting for an init that reaps slowly counts as gone).
bool process_exists(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

}  // namespace

TEST(Supervisor, ServesRequests) {
  Supervisor s(fake());
  auto r = s.call({{"op", "ping"}}, 10s);
  EXPECT_TRUE(r.value("ok", false));
  EXPECT_EQ(r["op"], "ping");
  EXPECT_EQ(s.replacements(), 0u);
}

TEST(Supervisor, HangIsKilledAndReplaced) {
  Supervisor s(fake());
  int before = s.call({{"op", "ping"}}, 10s)["pid"];
  auto r = s.call({{"op", "hang"}}, 500ms);
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_EQ(r["failure"], "timeout");
  EXPECT_FALSE(process_exists(before));
  auto next = s.call({{"op", "ping"}}, 10s);
  EXPECT_TRUE(next.value("ok", false));
  EXPECT_NE(next["pid"].get<int>(), before);
  EXPECT_EQ(s.replacements(), 1u);
}

TEST(Supervisor, CrashCarriesStderrTail) {
  Supervisor s(fake());
  auto r = s.call({{"op", "die"}}, 10s);
  EXPECT_EQ(r["failure"], "crashed");
  EXPECT_NE(r["stderr_tail"].get<std::string>().find("dying on purpose"), std::string::npos);
  // The one-line error names the last thing the process said (how a heap corruption's abort shows).
  EXPECT_NE(r["error"].get<std::string>().find("(its last stderr line: "), std::string::npos) << r["error"];
  EXPECT_NE(r["error"].get<std::string>().find("dying on purpose"), std::string::npos) << r["error"];
  EXPECT_TRUE(s.call({{"op", "ping"}}, 10s).value("ok", false));
}

TEST(Supervisor, GarbageIsAProtocolError) {
  Supervisor s(fake());
  auto r = s.call({{"op", "garbage"}}, 10s);
  EXPECT_EQ(r["failure"], "protocol_error");
  EXPECT_NE(r["stderr_tail"].get<std::string>().find("non-JSON"), std::string::npos);
  EXPECT_TRUE(s.call({{"op", "ping"}}, 10s).value("ok", false));
}

TEST(Supervisor, FatalReplyIsReturnedThenWorkerReplaced) {
  Supervisor s(fake());
  int before = s.call({{"op", "ping"}}, 10s)["pid"];
  auto r = s.call({{"op", "fatal"}}, 10s);
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_TRUE(r.value("fatal", false));
  EXPECT_NE(s.call({{"op", "ping"}}, 10s)["pid"].get<int>(), before);
}

TEST(Supervisor, KillTakesTheWholeProcessGroup) {
  pid_t child;
  {
    Supervisor s(fake());
    child = s.call({{"op", "spawn"}}, 10s)["child"];
    EXPECT_TRUE(process_exists(child));
    s.call({{"op", "hang"}}, 300ms);  // replaced: the group, grandchild included, is killed
  }
  // The grandchild was reparented to init (or a subreaper) and must be gone.
  for (int i = 0; i < 50 && process_exists(child); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(process_exists(child));
}

TEST(Supervisor, ManyThreadsShareThePool) {
  Supervisor s(fake(2));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) ok += s.call({{"op", "ping"}}, 10s).value("ok", false);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
}

TEST(Supervisor, RealWorkerSaysHello) {
  SupervisorOptions o;
  o.argv = {"python3", "-m", "kernelopt.worker"};
  o.env["PYTHONPATH"] = std::string(KOPT_SOURCE_DIR) + "/python";
  o.slots = {"cpu"};
  Supervisor s(o);
  auto h = s.hellos().at(0);
  EXPECT_EQ(h["device"], "cpu");
  EXPECT_EQ(h["protocol"], 1);
  EXPECT_TRUE(s.call({{"op", "echo"}, {"payload", 42}}, 30s)["payload"] == 42);
}

TEST(GpuEnv, IndicesArePositionsAmongTheVisibleGpus) {
  const char* saved = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string keep = saved ? saved : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(kopt::visible_device("1"), "1");  // nothing inherited: the machine's own numbering
  setenv("CUDA_VISIBLE_DEVICES", "2,3", 1);   // a lane or a scheduler gave this process GPUs 2 and 3
  EXPECT_EQ(kopt::visible_device("0"), "2");
  EXPECT_EQ(kopt::visible_device("1"), "3");
  EXPECT_THROW(kopt::visible_device("2"), kopt::UserError);
  EXPECT_EQ(kopt::visible_device("GPU-8f2c"), "GPU-8f2c");  // a UUID passes as given
  setenv("CUDA_VISIBLE_DEVICES", "", 1);  // no GPU visible at all
  EXPECT_THROW(kopt::visible_device("0"), kopt::UserError);
  if (saved) setenv("CUDA_VISIBLE_DEVICES", keep.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
}
