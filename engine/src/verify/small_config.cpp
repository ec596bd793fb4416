#include "verify/small_config.h"

#include <algorithm>
#include <map>
#include <set>

#include "artifact/literal.h"
#include "artifact/pin_config.h"
#include "artifact/pyparse/visit.h"
#include "verify/static/static_util.h"

namespace kopt::verify {

using nlohmann::json;

namespace {

// Block constexpr -> its size_hints key (the launcher's grid and loops use the matching numel).
const std::map<std::string, std::string, std::less<>> kBlockDims = {
    {"XBLOCK", "x"}, {"YBLOCK", "y"}, {"ZBLOCK", "z"}, {"R0_BLOCK", "r0_"}, {"R1_BLOCK", "r1_"}};

// The most elements the small config's tile holds: the size of Inductor's own largest reduction tiles
// (64 x 64, 8 x 512). The config is compiled on the GPU too (G2's run, the order probe): a 512 x 128
// tile of a Welford reduction (three fp32 accumulators a lane, spilled) took ptxas about 60 s there, a
// fresh draw's group norm kernel of 3 microseconds, and the job's budget with it. Smaller blocks give
// more programs and passes, which is what the config is for.
constexpr int64_t kTileBudget = 4096;

int64_t pow2_floor(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Names that step a `for ... in range(a, b, STEP)` / `tl.range(a, b, STEP, ...)` loop in `fn`,
// through plain aliases (`RBLOCK: tl.constexpr = R0_BLOCK`) back to the names they copy.
std::set<std::string> loop_steps(const py::Node* fn) {
  std::map<std::string, std::string> alias;
  std::set<std::string> steps;
  py::walk(fn, [&](const py::Node* n) {
    const py::Node* value = n->child("value");
    if (n->is("AnnAssign") && value && value->is("Name") && n->child("target")->is("Name"))
      alias[std::string(n->child("target")->ident("id"))] = value->ident("id");
    if (n->is("Assign") && value && value->is("Name"))
      for (const py::Node* t : n->list("targets"))
        if (t->is("Name")) alias[std::string(t->ident("id"))] = value->ident("id");
    if (n->is("For")) {
      const py::Node* it = n->child("iter");
      std::string fn_name = it && it->is("Call") ? ir::dotted_name(it->child("func")) : "";
      if ((fn_name == "range" || fn_name == "tl.range") && it->list("args").size() >= 3 &&
          it->list("args")[2]->is("Name"))
        steps.insert(std::string(it->list("args")[2]->ident("id")));
    }
  });
  std::set<std::string> out;
  for (std::string s : steps) {
    for (int hops = 0; hops < 8 && alias.count(s); ++hops) s = alias[s];
    out.insert(s);
  }
  return out;
}

}  // namespace

std::optional<json> small_config(const ir::Kernel& k, const std::string& candidate) {
  // Templates, scans, user and combo kernels compute their grids and arguments their own way.
  if (k.kind != "pointwise" && k.kind != "reduction" && k.kind != "persistent_reduction") return std::nullopt;
  ir::KernelSource ks;
  try {
    ks = ir::parse_kernel_source(candidate, k.name, k.name);
  } catch (const std::exception&) {
    return std::nullopt;  // G1 rejects what does not parse; nothing to add here
  }
  if (!ks.entry) return std::nullopt;
  // A pinned candidate (fixed_config) is launched with its pinned blocks: those are the current
  // values; otherwise the widest a block gets (the next power of two of its numel, the size hint).
  json cfg = ir::pinned_config(ks).value_or(json::object());
  if (!cfg.is_object()) return std::nullopt;
  const std::set<std::string> looped = loop_steps(ks.entry);
  std::vector<std::string> shrinkable;
  bool smaller = false;
  for (const ir::KernelParam& p : k.signature) {
    if (!p.is_constexpr || !p.constant.is_null()) continue;
    auto dim = kBlockDims.find(p.name);
    if (dim == kBlockDims.end() || !k.size_hints.is_object() || !k.size_hints.contains(dim->second) ||
        !k.size_hints[dim->second].is_number_integer())
      return std::nullopt;  // a constexpr whose legal values this rule does not know
    int64_t hint = k.size_hints[dim->second].get<int64_t>();
    int64_t current = cfg.contains(p.name) && cfg[p.name].is_number_integer() ? cfg[p.name].get<int64_t>() : hint;
    bool program_axis = p.name[0] != 'R';
    if (!program_axis && !looped.count(p.name)) {
      cfg[p.name] = current;  // one block covers the row: kept, or the rest of the row is dropped
      continue;
    }
    // Half the numel's power of two: two programs (or passes) when numel > hint / 2, as it is.
    int64_t v = std::min(current, std::max<int64_t>(1, pow2_floor(hint / 2)));
    smaller = smaller || v < current;
    cfg[p.name] = v;
    shrinkable.push_back(p.name);
  }
  if (!smaller) return std::nullopt;
  // Blocks halved (largest first) until the tile fits: more programs and passes, never fewer.
  auto tile = [&] {
    int64_t t = 1;
    for (const auto& [name, _] : kBlockDims)
      if (cfg.contains(name)) t *= cfg[name].get<int64_t>();
    return t;
  };
  while (tile() > kTileBudget) {
    auto largest = std::max_element(shrinkable.begin(), shrinkable.end(), [&](const auto& a, const auto& b) {
      return cfg[a].template get<int64_t>() < cfg[b].template get<int64_t>();
    });
    if (largest == shrinkable.end() || cfg[*largest].get<int64_t>() <= 1) break;
    cfg[*largest] = cfg[*largest].get<int64_t>() / 2;
  }
  if (!cfg.contains("num_warps")) cfg["num_warps"] = 4;
  if (!cfg.contains("num_stages")) cfg["num_stages"] = 1;
  return cfg;
}

}  // namespace kopt::verify
