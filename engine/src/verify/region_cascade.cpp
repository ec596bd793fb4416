#include "verify/region_cascade.h"

#include <chrono>
#include <map>
#include <regex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "artifact/pin_config.h"
#include "stitch/stitch.h"
#include "verify/g2_runs.h"
#include "verify/order_probe.h"
#include "verify/rules.h"
#include "worker/client.h"

namespace kopt::verify {

using nlohmann::json;

namespace {

// Statements that only prepare a launch: a region's statements reach back over them.
bool prepares(const ir::Step& s) {
  return s.kind == ir::Step::Kind::Alloc || s.kind == ir::Step::Kind::View || s.kind == ir::Step::Kind::Alias ||
         s.kind == ir::Step::Kind::Del || (s.kind == ir::Step::Kind::Other && ir::is_stream_lookup(s.text));
}

// The statements that run `launches` (indices into the entry's launches), verbatim: the allocations
// and stream lookups just before the first, then every launch, allocation, view, alias and stream
// lookup through the last (`del`s are left out: the scope ends with the run); and the names they define.
struct RegionCode {
  std::vector<std::string> statements;
  std::set<std::string> defined;
};

RegionCode region_code(const ir::Artifact& a, const std::set<size_t>& launches) {
  const ir::Function& f = *a.entry_function();
  size_t first = f.steps.size(), last = 0;
  for (size_t i = 0; i < f.steps.size(); ++i)
    if (f.steps[i].kind == ir::Step::Kind::Launch && launches.count(f.steps[i].index))
      first = std::min(first, i), last = std::max(last, i);
  // Before the first launch, only what defines nothing from outside (a view or alias there may be of a
  // buffer the statements do not have).
  auto before = [](const ir::Step& s) {
    return prepares(s) && s.kind != ir::Step::Kind::View && s.kind != ir::Step::Kind::Alias;
  };
  while (first > 0 && first <= last && before(f.steps[first - 1])) --first;
  RegionCode out;
  for (size_t i = first; i <= last && i < f.steps.size(); ++i) {
    const ir::Step& s = f.steps[i];
    if (s.kind != ir::Step::Kind::Launch && (!prepares(s) || s.kind == ir::Step::Kind::Del)) continue;
    out.statements.push_back(span_text(a, s.span));
    if (s.kind == ir::Step::Kind::Alloc) out.defined.insert(f.allocs[s.index].buffer);
    if (s.kind == ir::Step::Kind::View) out.defined.insert(f.views[s.index].buffer);
    if (s.kind == ir::Step::Kind::Alias) out.defined.insert(s.names.at(0));
  }
  return out;
}

// Where each name the region's launches pass, and its statements do not define, comes from: the
// first recorded launch that passes it (an inline view `reinterpret_tensor(buf, ...)` binds `buf` to
// the recorded view, whose snapshot holds buf's whole storage).
std::vector<worker::RegionBinding> bindings(const ir::Artifact& a, const std::vector<size_t>& launches,
                                            const std::set<std::string>& defined) {
  const ir::Function& f = *a.entry_function();
  std::vector<worker::RegionBinding> out;
  std::set<std::string> seen;
  static const std::regex ident(R"(^[A-Za-z_]\w*$)");
  for (size_t li : launches) {
    const ir::Launch& l = f.launches[li];
    size_t ordinal = 0;
    for (size_t j = 0; j < li; ++j) ordinal += f.launches[j].kernel == l.kernel;
    static const std::regex inline_view(R"(^\s*reinterpret_tensor\(\s*(\w+))");
    for (size_t i = 0; i < l.args.size(); ++i) {
      const ir::Arg& arg = l.args[i];
      if (!arg.keyword.empty()) continue;
      std::smatch m;
      std::string name = arg.text;
      if (std::regex_search(arg.text, m, inline_view)) name = m[1];
      else if (arg.kind != ir::Arg::Kind::Name || !std::regex_match(arg.text, ident)) continue;
      if (defined.count(name) || !seen.insert(name).second) continue;
      out.push_back({name, a.kernels[l.kernel].var, ordinal, i});
    }
  }
  return out;
}

// G2's order probe for a region (order_probe.h): the baseline module with each of the region's kernels pinned
// to its first probe config, run as the candidate of the original's own statements on the same inputs. Evidence
// when it differs from the baseline's run in NaN/Inf positions alone; nothing otherwise.
std::optional<json> order_probe(worker::Supervisor& sup, const ir::Artifact& a, const RegionFacts& facts,
                                const worker::RunRegionRequest& run, const CascadeOptions& o, const json& candidate) {
  std::set<size_t> kernels;
  for (size_t li : facts.launches) kernels.insert(a.entry_function()->launches[li].kernel);
  std::vector<stitch::Replacement> pinned;
  json configs = json::object();
  for (size_t ki : kernels) {
    const ir::Kernel& k = a.kernels[ki];
    std::vector<json> probes = order_probes(k);
    if (probes.empty()) continue;
    try {
      pinned.push_back({k.name, ir::pin_config(k.source, k.name, probes.front()), "order probe"});
    } catch (const std::exception&) {
      continue;  // a config this kernel's source does not take: no probe of it
    }
    configs[k.name] = ir::describe_config(probes.front());
  }
  if (pinned.empty()) return std::nullopt;
  worker::RunRegionRequest req = run;
  req.source = stitch::stitch(a, pinned, o.pins);
  req.candidate = req.original;
  req.repeat = false;
  worker::RunKernelReply r = worker::run_region(sup, req, o.timeout);
  if (failed_reply(r) || r.match || !within_order_sensitivity(candidate, r.comparison)) return std::nullopt;
  return json{{"original_configs", configs},
              {"original_max_rel", worst_rel(r.comparison, "args")},
              {"rule", "the original launches, their kernels under these configs, differ from the baseline's run as "
                       "much on these inputs: the differences are the grouping's; G3's float64 rule decides"}};
}

GateRecord g2(worker::Supervisor& sup, const ir::Bundle& b, size_t graph, const RegionFacts& facts,
              const std::string& module, const CascadeOptions& o) {
  const ir::Artifact& a = *b.graphs.at(graph);
  std::unique_ptr<ir::Artifact> cand = ir::build(module, "candidate module");
  // The candidate's region: the launches it kept of the region, and the fused one (every launch the
  // original does not have).
  std::multiset<std::string> original_launches;
  for (const ir::Launch& l : a.entry_function()->launches) original_launches.insert(span_text(a, l.span));
  std::set<std::string> region_texts;
  for (size_t i : facts.launches) region_texts.insert(span_text(a, a.entry_function()->launches[i].span));
  std::set<size_t> cand_launches;
  const auto& cl = cand->entry_function()->launches;
  for (size_t i = 0; i < cl.size(); ++i) {
    std::string t = span_text(*cand, cl[i].span);
    if (region_texts.count(t) || !original_launches.count(t)) cand_launches.insert(i);
  }
  RegionCode original = region_code(a, {facts.launches.begin(), facts.launches.end()});
  RegionCode candidate = region_code(*cand, cand_launches);
  worker::RunRegionRequest base{.bundle = b.dir, .graph = graph, .source = module, .original = original.statements,
                                .candidate = candidate.statements,
                                .bindings = bindings(a, facts.launches, original.defined), .outputs = facts.outputs,
                                .tolerances = o.tol.to_json()};
  json runs = json::array();
  bool rounding = false;
  for (const G2Run& run : g2_runs(o.seeds, false)) {
    worker::RunRegionRequest req = base;
    req.poison_fill = run.fill;
    req.repeat = run.repeat;
    if (run.seed >= 0) req.seed = run.seed, req.inputs = run.inputs;
    auto t0 = std::chrono::steady_clock::now();
    worker::RunKernelReply r = worker::run_region(sup, req, o.timeout);
    std::string label = run.seed < 0 ? std::string("recorded") : fmt::format("seed {} ({})", run.seed, run.inputs);
    json summary = {{"inputs", label}, {"poison_fill", run.fill},
                    {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
    if (failed_reply(r)) {
      summary.update(reply_evidence(r));
      runs.push_back(summary);
      return {"G2", GateStatus::failed, {{"runs", runs}, {"reason", "the region did not run"}}};
    }
    summary["max_rel"] = worst_rel(r.comparison, "args");
    // As for one kernel (cascade.cpp): on ordinary inputs a match holds within rtol of each output's scale.
    json off_scale = ordinary_inputs(run) ? beyond_scale(r.comparison, "args") : json::array();
    if (r.match && !off_scale.empty())
      return failed_beyond_scale(summary, runs, off_scale, "the original launches'", "mismatched_outputs");
    summary["match"] = r.match;
    if (r.deterministic) summary["deterministic"] = *r.deterministic;
    if (!r.match && r.rounding_only) {
      summary["rounding_only"] = true;
      runs.push_back(summary);
      rounding = true;
      continue;
    }
    if (!r.match && probe_worthy(r.comparison, run.fill, r.deterministic.value_or(true))) {
      // As for one kernel (cascade.cpp): the original's own grouping differing as much.
      if (auto probe = order_probe(sup, a, facts, req, o, r.comparison)) {
        summary["order_sensitive"] = *probe;
        runs.push_back(summary);
        rounding = true;
        continue;
      }
    }
    runs.push_back(summary);
    if (!r.match) {
      json bad = json::array();
      for (const json& x : r.comparison.value("args", json::array()))
        if (!x.value("ok", true)) {
          json named = x;
          size_t i = x.value("arg", size_t{0});
          if (i < facts.outputs.size()) named["name"] = facts.outputs[i];
          bad.push_back(named);
        }
      std::string why = r.deterministic.value_or(true) ? "region outputs differ from the original launches'"
                                                       : "two runs on the same inputs differ";
      return {"G2", GateStatus::failed, {{"runs", runs}, {"reason", why}, {"mismatched_outputs", bad}}};
    }
  }
  json ev = {{"runs", runs}, {"tolerances", o.tol.to_json()}, {"outputs", facts.outputs}};
  if (rounding) ev["needs_fp64"] = true;
  return {"G2", GateStatus::passed, ev};
}

GateRecord region_g1(const ir::Artifact& a, const RegionFacts& facts, const std::string& module, RegionG1* out) {
  RegionG1 r = check_region(a, facts, module);
  json findings = json::array();
  for (const Finding& f : r.g1.findings) findings.push_back({{"check", f.check}, {"passed", f.passed}, {"message", f.message}});
  if (out) *out = r;
  return GateRecord{"G1", r.g1.passed ? GateStatus::passed : GateStatus::failed, {{"findings", findings}}};
}

worker::TimedReply time_candidate(worker::Supervisor& sup, const ir::Bundle& b, size_t graph, const std::string& pinned,
                                  const CascadeOptions& o, int reps) {
  std::vector<std::string> sources;
  for (size_t g = 0; g < b.graphs.size(); ++g) sources.push_back(g == graph ? pinned : b.graphs[g]->module->source());
  return worker::time_module(sup, {.bundle = b.dir, .sources = sources, .reps = reps}, o.timeout);
}

}  // namespace

RegionScreen screen_region(worker::Supervisor& sup, const ir::Bundle& b, size_t graph, const RegionFacts& facts,
                           const std::string& module, const CascadeOptions& o, int reps) {
  RegionScreen out;
  RegionG1 r;
  out.g1 = region_g1(*b.graphs.at(graph), facts, module, &r);
  if (out.g1.status != GateStatus::passed || !r.edit) return out;
  worker::TimedReply t = time_candidate(sup, b, graph, stitch::stitch(*b.graphs.at(graph), {}, o.pins, {*r.edit}), o, reps);
  if (failed_reply(t) || !t.measured) return out;
  out.baseline_ms = t.baseline.median_ms, out.candidate_ms = t.candidate.median_ms;
  return out;
}

RegionCascadeResult run_region_cascade(worker::Supervisor& sup, const ir::Bundle& b, size_t graph,
                                       const RegionFacts& facts, const std::string& module,
                                       const CascadeOptions& o) {
  RegionCascadeResult out;
  CascadeResult& res = out.cascade;
  res.candidate_hash = source_hash(module);
  auto stop_after = [&](auto&& gate) {
    auto t0 = std::chrono::steady_clock::now();
    GateRecord g = gate();
    if (g.evidence.is_object())
      g.evidence["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool ok = lets_through(g.status);
    res.gates.push_back(std::move(g));
    return !ok;
  };
  const ir::Artifact& a = *b.graphs.at(graph);
  if (stop_after([&] {
        RegionG1 r;
        GateRecord g = region_g1(a, facts, module, &r);
        out.edit = r.edit;
        if (r.edit) res.kernel = r.edit->kernel;
        return g;
      }))
    return out;
  // G2, G3 and G4 on the candidate module with the kept kernels pinned to the baseline's configs. G2 too: the
  // region's original launches it runs beside the fused one are the module's kernels, which loaded afresh would
  // autotune again; a cumprod of special values settled on other warps multiplies in another order, and G2 then
  // failed a fused kernel that ran the baseline's own config (NaN positions differing, an H100).
  std::string pinned = stitch::stitch(a, {}, o.pins, {*out.edit});
  if (stop_after([&] { return g2(sup, b, graph, facts, pinned, o); })) return out;
  if (stop_after([&] {
        const bool fp64_only = passed_on_rounding(res);
        worker::RunModuleReply r = model_run(
            sup, {.bundle = b.dir, .source = pinned, .graph = graph, .tolerances = o.tol.to_json()}, o, fp64_only);
        if (failed_reply(r)) return GateRecord{"G3", GateStatus::failed, reply_evidence(r)};
        Verdict v = model_verdict(r, o, fp64_only);
        return GateRecord{"G3", v.passed ? GateStatus::passed : GateStatus::failed, v.evidence};
      }))
    return out;
  if (stop_after([&] {
        worker::TimedReply t = time_candidate(sup, b, graph, pinned, o, o.reps);
        if (failed_reply(t)) return GateRecord{"G4", GateStatus::failed, reply_evidence(t)};
        if (!t.measured) return GateRecord{"G4", GateStatus::not_measured, {{"reason", t.reason.value_or("")}}};
        Verdict v = timing_verdict(t.baseline, t.candidate, o.gamma, "candidate");
        if (t.candidate.median_ms > 0) out.speedup = t.baseline.median_ms / t.candidate.median_ms;
        out.saved_ms = t.baseline.median_ms - t.candidate.median_ms;
        return GateRecord{"G4", v.passed ? GateStatus::passed : GateStatus::failed, v.evidence};
      }))
    return out;
  res.accepted = true;
  res.performance_measured = res.gates.back().status == GateStatus::passed;
  return out;
}

}  // namespace kopt::verify
