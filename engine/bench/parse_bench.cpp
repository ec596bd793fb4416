// Parse + IR of a 10,000-line Inductor-shaped module (the hand-written test
// module's kernel declarations repeated under fresh names, with one launch each).
// Target: under 20 ms on one core (issue: foundation). Results: benchmarks/RESULTS.md.
#include <benchmark/benchmark.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "artifact/ir.h"

namespace {

std::string make_module(size_t min_lines) {
  std::ifstream in(std::string(KOPT_SOURCE_DIR) + "/engine/tests/data/inductor_like.py");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  // Split into header (up to the first kernel), kernel declarations, and tail (from async_compile.wait).
  size_t first = src.find("# kernel path:");
  size_t tail = src.find("async_compile.wait(globals())");
  std::string header = src.substr(0, first), kernels = src.substr(first, tail - first);
  std::string body, launches;
  size_t lines = 0, copy = 0;
  auto count = [](const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); };
  while (lines < min_lines) {
    std::string suffix = "_c" + std::to_string(copy++);
    std::string k = std::regex_replace(kernels, std::regex("(triton_(poi|red)_fused_[a-z_]+_[01])"), "$1" + suffix);
    body += k;
    launches += "            triton_red_fused_sum_1" + suffix + ".run(buf1, buf2, 64, 64, stream=stream0)\n";
    lines = count(header) + count(body) + count(launches) + 40;
  }
  std::string rest = src.substr(tail);
  size_t at = rest.find("            buf3 = reinterpret_tensor");
  rest.insert(at, launches);
  return header + body + rest;
}

void BM_ParseAndBuildIR(benchmark::State& state) {
  const std::string module = make_module(10000);
  size_t kernels = 0;
  for (auto _ : state) {
    auto art = kopt::ir::build(module, "bench.py");
    kernels = art->kernels.size();
    benchmark::DoNotOptimize(art);
  }
  state.counters["lines"] = static_cast<double>(std::count(module.begin(), module.end(), '\n'));
  state.counters["kernels"] = static_cast<double>(kernels);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * module.size()));
}
BENCHMARK(BM_ParseAndBuildIR)->Unit(benchmark::kMillisecond);

// The parser alone on the same module (the IR also parses every kernel's source).
void BM_ParseOnly(benchmark::State& state) {
  const std::string module = make_module(10000);
  for (auto _ : state) benchmark::DoNotOptimize(kopt::py::parse(module, "bench.py"));
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond);

}  // namespace
