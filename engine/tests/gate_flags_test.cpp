// The gate settings' one source (verify/cascade.h): the flags `verify` and `optimize` register from it
// (cli/gate_flags.h), docs/gates.md's table of defaults, and the named timing slack. The worker's side
// (compare.py's default tolerances) is pinned to the engine's by tests/python/test_gate_defaults.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/gate_flags.h"
#include "verify/cascade.h"
#include "verify/rules.h"

using namespace kopt;
using nlohmann::json;

namespace {

// Parses `args` (no program name) as the command line of `app`.
void parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form in reverse order
  app.parse(args);
}

bool same(const verify::CascadeOptions& a, const verify::CascadeOptions& b) {
  return a.seeds == b.seeds && a.gamma == b.gamma && a.reps == b.reps && a.fp64_slack == b.fp64_slack &&
         a.timeout == b.timeout && a.load_timeout == b.load_timeout && a.tol.to_json() == b.tol.to_json();
}

}  // namespace

TEST(GateFlags, DefaultsAreTheStructsAndShowInTheHelp) {
  verify::CascadeOptions gate;
  CLI::App app;
  cli::add_gate_flags(app, gate, {.reps = true});
  cli::add_seconds_option(app, "--timeout", gate.timeout, "seconds");
  parse(app, {});
  EXPECT_TRUE(same(gate, verify::CascadeOptions{}));
  // What `--help` shows is the struct's value, as CLI11 prints it.
  std::string help = app.help();
  for (const char* shown : {"--seeds INT:NONNEGATIVE=5", "--gamma FLOAT:AT_LEAST_1=1.03", "--reps INT:POSITIVE=50",
                            "--atol-fp32 FLOAT:NONNEGATIVE=0.0001", "--rtol-fp32 FLOAT:NONNEGATIVE=0.0001",
                            "--atol-half FLOAT:NONNEGATIVE=0.01", "--rtol-half FLOAT:NONNEGATIVE=0.01",
                            "--timeout INT:POSITIVE=600"})
    EXPECT_NE(help.find(shown), std::string::npos) << shown << "\n" << help;
}

TEST(GateFlags, ValuesGivenReachTheStruct) {
  verify::CascadeOptions gate;
  CLI::App app;
  cli::add_gate_flags(app, gate, {.reps = true});
  cli::add_seconds_option(app, "--timeout", gate.timeout, "seconds");
  parse(app, {"--seeds", "2", "--gamma", "1.1", "--reps", "7", "--atol-fp32", "1e-3", "--rtol-fp32", "2e-3",
              "--atol-half", "0.05", "--rtol-half", "0.06", "--timeout", "30"});
  EXPECT_EQ(gate.seeds, 2);
  EXPECT_EQ(gate.gamma, 1.1);
  EXPECT_EQ(gate.reps, 7);
  EXPECT_EQ(gate.tol.to_json()["float32"], json({{"atol", 1e-3}, {"rtol", 2e-3}}));
  EXPECT_EQ(gate.tol.to_json()["bfloat16"], json({{"atol", 0.05}, {"rtol", 0.06}}));
  EXPECT_EQ(gate.timeout, std::chrono::seconds(30));
  // What no flag sets keeps its default.
  EXPECT_EQ(gate.fp64_slack, verify::CascadeOptions{}.fp64_slack);
  EXPECT_EQ(gate.load_timeout, verify::CascadeOptions{}.load_timeout);
}

TEST(GateFlags, OptimizesSetHasNoRepsAndBothCheckRanges) {
  verify::CascadeOptions gate;
  CLI::App app;
  cli::add_gate_flags(app, gate);
  EXPECT_EQ(app.get_option_no_throw("--reps"), nullptr);
  parse(app, {"--seeds", "0", "--gamma", "1"});  // the documented minimums
  EXPECT_EQ(gate.seeds, 0);
  EXPECT_EQ(gate.gamma, 1.0);
  // Out of range or not a number: a ValidationError from the flag's own check, before any conversion.
  for (std::vector<std::string> bad : {std::vector<std::string>{"--seeds", "-1"}, {"--seeds", "abc"}, {"--seeds", "1.5"},
                                       {"--gamma", "0"}, {"--gamma", "0.99"}, {"--atol-half", "-0.1"},
                                       {"--timeout", "0"}, {"--timeout", "-1"}, {"--reps", "0"}}) {
    verify::CascadeOptions checked;
    CLI::App strict;
    cli::add_gate_flags(strict, checked, {.reps = true});
    cli::add_seconds_option(strict, "--timeout", checked.timeout, "seconds");
    EXPECT_THROW(parse(strict, bad), CLI::ValidationError) << bad[0] << " " << bad[1];
  }
}

TEST(GateDefaults, DocsTableStatesCascadeOptions) {
  // docs/gates.md, "Options and defaults": one row per setting, its names in backticks in the first column
  // ("`--seeds N`", "(`fp64_slack`)"), its values in the second ("1e-4, 1e-4").
  const verify::CascadeOptions o;
  const std::map<std::string, double> want = {
      {"--seeds", static_cast<double>(o.seeds)},
      {"--atol-fp32", o.tol.atol_fp32},
      {"--rtol-fp32", o.tol.rtol_fp32},
      {"--atol-half", o.tol.atol_half},
      {"--rtol-half", o.tol.rtol_half},
      {"--gamma", o.gamma},
      {"--reps", static_cast<double>(o.reps)},
      {"--timeout", static_cast<double>(o.timeout.count())},
      {"load_timeout", static_cast<double>(o.load_timeout.count())},
      {"fp64_slack", o.fp64_slack},
      {"kHiddenSlackMs", verify::kHiddenSlackMs},
      {"kHiddenSlackOfMedian", verify::kHiddenSlackOfMedian},
  };
  std::ifstream f(std::string(KOPT_SOURCE_DIR) + "/docs/gates.md");
  ASSERT_TRUE(f) << "docs/gates.md";
  std::string line;
  bool inside = false;
  std::map<std::string, double> got;
  const std::regex name(R"(`([^` ]+)[^`]*`)");
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) inside = line == "## Options and defaults";
    if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| option", 0) == 0) continue;
    size_t a = line.find(" | "), b = line.find(" | ", a + 3);
    ASSERT_NE(b, std::string::npos) << line;
    std::string names = line.substr(2, a - 2), values = line.substr(a + 3, b - a - 3);
    std::vector<std::string> ns, vs;
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) ns.push_back((*it)[1]);
    std::stringstream ss(values);
    for (std::string v; std::getline(ss, v, ',');) vs.push_back(v);
    ASSERT_EQ(ns.size(), vs.size()) << line;
    for (size_t i = 0; i < ns.size(); ++i) {
      char* end = nullptr;
      double v = std::strtod(vs[i].c_str(), &end);
      EXPECT_TRUE(end && *end == '\0') << "not a number: '" << vs[i] << "' in " << line;
      got[ns[i]] = v;
    }
  }
  EXPECT_EQ(got, want) << "docs/gates.md's table of defaults differs from engine/src/verify/cascade.h";
}

TEST(GateDefaults, HiddenWorkSlackIsTheNamedConstants) {
  // Baseline: 1 ms on the timed stream, 1.2 ms synchronized; the candidate may show at most
  // kHiddenSlackMs + kHiddenSlackOfMedian * 1 ms more outside the stream than that.
  auto summary = [](double ms, double synced) {
    return worker::parse_timing(
        json{{"p20_ms", ms}, {"median_ms", ms}, {"p80_ms", ms}, {"synced", {{"median_ms", synced}}}}, "test");
  };
  worker::Timing base = summary(1.0, 1.2);
  double slack = verify::kHiddenSlackMs + verify::kHiddenSlackOfMedian * 1.0;
  auto with_hidden = [&](double extra) { return summary(0.5, 0.5 + 0.2 + extra); };
  EXPECT_TRUE(verify::timing_verdict(base, with_hidden(slack * 0.99), 1.03, "candidate").passed);
  EXPECT_FALSE(verify::timing_verdict(base, with_hidden(slack * 1.01), 1.03, "candidate").passed);
}
