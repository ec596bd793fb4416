// What the region tests share: a bundle's first region as the built-in coder plans it (its facts for G1, the
// candidates), the candidates of one origin, and the first finding a region's G1 failed on.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/fusion/fusion.h"
#include "artifact/bundle.h"
#include "verify/region_host.h"

namespace kopt::testing {

struct Planned {
  std::unique_ptr<ir::Bundle> bundle;
  verify::RegionFacts facts;
  agents::fusion::RegionPlan plan;
  const ir::Artifact& art() const { return *bundle->graphs.at(0); }
};

// `dir`: a bundle, absolute or relative to the source tree.
inline Planned plan(const std::string& dir) {
  std::filesystem::path path = dir;
  if (path.is_relative()) path = std::filesystem::path(KOPT_SOURCE_DIR) / dir;
  Planned p{ir::load_bundle(path.string()), {}, {}};
  const ir::Artifact& a = p.art();
  auto rs = profile::regions(a, *a.entry_function(), p.bundle->meta["graphs"][0]["args"]);
  p.facts = profile::facts(rs.at(0));
  p.plan = agents::fusion::plan_region(a, *a.entry_function(), rs.at(0));
  return p;
}

inline std::vector<const agents::fusion::RegionCandidate*> of_origin(const Planned& p, const std::string& origin) {
  std::vector<const agents::fusion::RegionCandidate*> out;
  for (const auto& c : p.plan.candidates)
    if (c.origin == origin) out.push_back(&c);
  return out;
}

// Every decline of the plan, a line each.
inline std::string declined(const Planned& p) {
  std::string out;
  for (const std::string& d : p.plan.declined) out += d + "\n";
  return out;
}

inline std::string failing(const verify::RegionG1& r) {
  for (const auto& f : r.g1.findings)
    if (!f.passed) return f.check + ": " + f.message;
  return "";
}

// tools/compile_hopper.py on `module` (written to a temporary file): its exit status and output. `args`: more of
// its flags (`--kernel SUFFIX`).
struct Compiled {
  int status = -1;
  std::string out;
};
inline Compiled compile_hopper(const std::string& module, const std::string& args = "") {
  std::filesystem::path file = std::filesystem::temp_directory_path() / fmt::format("kopt_hopper_{}.py", ::getpid());
  std::ofstream(file) << module;
  std::string cmd = fmt::format("python3 {}/tools/compile_hopper.py {} {} 2>&1", KOPT_SOURCE_DIR, file.string(), args);
  Compiled c;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[512];
  while (pipe && std::fgets(buf, sizeof buf, pipe)) c.out += buf;
  int rc = pipe ? ::pclose(pipe) : -1;
  c.status = rc < 0 ? -1 : WEXITSTATUS(rc);
  std::filesystem::remove(file);
  return c;
}

}  // namespace kopt::testing
