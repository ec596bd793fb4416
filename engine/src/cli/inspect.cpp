// `kernelopt inspect BUNDLE|MODULE.py [--json]`: what a module holds; with `--source KERNEL [-o FILE]`, that
// kernel's source as a standalone candidate file (the string Inductor passed to async_compile.triton: imports,
// heuristics decorator, @triton.jit function), the starting point of a hand-written candidate.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "artifact/bundle.h"
#include "cli/commands.h"
#include "agents/coder/fusion/fusion.h"
#include "profile/regions.h"
#include "util/error.h"

namespace kopt::cli {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

void print_table(const ir::Artifact& a, const nlohmann::json* graph_meta) {
  fmt::print("{}  (entry: {})\n", a.path, a.entry);
  fmt::print("  kernels ({}):\n", a.kernels.size());
  size_t w = 4;
  for (const auto& k : a.kernels) w = std::max(w, k.name.size());
  fmt::print("    {:<{}}  {:<20}  {:>8}  {}\n", "name", w, "kind", "launches", "ATen ops");
  for (const auto& k : a.kernels)
    fmt::print("    {:<{}}  {:<20}  {:>8}  {}\n", k.name, w, k.kind, k.launch_count, join(k.aten_ops));
  size_t n_ext = 0;
  for (const auto& f : a.functions) n_ext += f.externs.size();
  fmt::print("  extern calls ({}):\n", n_ext);
  for (const auto& f : a.functions)
    for (const auto& e : f.externs) fmt::print("    {}  -> {}  (line {})\n", e.op, e.out.empty() ? "?" : e.out, e.span.begin.line);
  const ir::Function* entry = a.entry_function();
  fmt::print("  inputs of {}() ({}):\n", a.entry, entry ? entry->inputs.size() : 0);
  if (!entry) return;
  for (const auto& in : entry->inputs) {
    std::string mapped;
    if (graph_meta && graph_meta->contains("args") && in.index < (*graph_meta)["args"].size()) {
      const auto& m = (*graph_meta)["args"][in.index];
      mapped = m.value("kind", "?");
      if (m.contains("name")) mapped += " " + m["name"].get<std::string>();
      if (m.contains("input_index")) mapped += fmt::format(" #{}", m["input_index"].dump());
    }
    fmt::print("    {:<10}  sizes ({})  strides ({})  {}\n", in.name, join(in.sizes), join(in.strides), mapped);
  }
  // Regions: the Triton launches between vendor calls, and what a fusion of each could save.
  nlohmann::json args = graph_meta && graph_meta->contains("args") ? (*graph_meta)["args"] : nlohmann::json();
  auto rs = profile::regions(a, *entry, args);
  fmt::print("  regions ({}):\n", rs.size());
  for (size_t i = 0; i < rs.size(); ++i) {
    std::vector<std::string> kernels, internal;
    for (size_t l : rs[i].launches) kernels.push_back(a.kernels[entry->launches[l].kernel].name);
    for (const auto& b : rs[i].internal) internal.push_back(b.name);
    fmt::print("    #{}  {} launch(es)  one-pass floor {} B  internal {} B ({})  [{}]\n", i, kernels.size(),
               rs[i].floor_bytes(), rs[i].internal_bytes(), internal.empty() ? "none" : join(internal),
               join(kernels));
    // What the built-in coder's fusion strategies make of it (on the kernels' own sources).
    agents::fusion::RegionPlan plan = agents::fusion::plan_region(a, *entry, rs[i]);
    for (const auto& c : plan.candidates) fmt::print("        fusion {} {}: {}\n", c.id, c.origin, c.description);
    for (const std::string& d : plan.declined) fmt::print("        declined: {}\n", d);
  }
}

// The kernel named `name` in any graph; an unknown name is a user error listing the names there are.
const ir::Kernel& find_kernel(const std::vector<const ir::Artifact*>& graphs, const std::string& target,
                              const std::string& name) {
  std::vector<std::string> names;
  for (const ir::Artifact* a : graphs)
    for (const ir::Kernel& k : a->kernels) {
      if (k.name == name) return k;
      names.push_back(k.name);
    }
  throw UserError(fmt::format("--source {}: no such kernel in {}; its kernels: {}", name, target,
                              names.empty() ? "none" : join(names)));
}

int write_source(const InspectOptions& o, const std::vector<const ir::Artifact*>& graphs) {
  if (o.json) throw UserError("--source writes a kernel's source, --json the IR; give one of them");
  const std::string& text = find_kernel(graphs, o.target, o.source).source;
  if (o.out.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw UserError(fmt::format("{}: cannot write; check the directory exists and is writable", o.out));
  return 0;
}

}  // namespace

int inspect(const InspectOptions& o) {
  if (!o.out.empty() && o.source.empty())
    throw UserError("-o/--out names the file --source writes; add --source KERNEL, or drop -o for the table");
  if (!o.source.empty()) {
    std::vector<const ir::Artifact*> graphs;
    std::unique_ptr<ir::Bundle> b;
    std::unique_ptr<ir::Artifact> a;
    if (ir::is_bundle_dir(o.target)) {
      b = ir::load_bundle(o.target);
      for (const auto& g : b->graphs) graphs.push_back(g.get());
    } else {
      a = ir::load(o.target);
      graphs.push_back(a.get());
    }
    return write_source(o, graphs);
  }
  if (ir::is_bundle_dir(o.target)) {
    auto b = ir::load_bundle(o.target);
    if (o.json) {
      nlohmann::json out = {{"bundle", o.target}, {"meta", b->meta}, {"graphs", nlohmann::json::array()},
                            {"kernels", nlohmann::json::array()}, {"extern_calls", nlohmann::json::array()}};
      for (size_t i = 0; i < b->graphs.size(); ++i) {
        nlohmann::json g = ir::to_json(*b->graphs[i]);
        if (const ir::Function* entry = b->graphs[i]->entry_function())
          g["regions"] = profile::to_json(*b->graphs[i], *entry,
                                          profile::regions(*b->graphs[i], *entry, b->meta["graphs"][i]["args"]));
        for (auto k : g["kernels"]) out["kernels"].push_back((k["graph"] = i, k));
        for (auto e : g["extern_calls"]) out["extern_calls"].push_back((e["graph"] = i, e));
        out["graphs"].push_back(std::move(g));
      }
      std::cout << out.dump(2) << "\n";
      return 0;
    }
    fmt::print("bundle {}: {} graph(s), captured with torch {} on {}\n", o.target, b->graphs.size(),
               b->meta.value(nlohmann::json::json_pointer("/versions/torch"), std::string("?")),
               b->meta.contains("gpu") && b->meta["gpu"].is_object() ? b->meta["gpu"].value("name", "?") : "cpu");
    for (size_t i = 0; i < b->graphs.size(); ++i) print_table(*b->graphs[i], &b->meta["graphs"][i]);
    return 0;
  }
  auto a = ir::load(o.target);
  if (o.json) {
    std::cout << ir::to_json(*a).dump(2) << "\n";
    return 0;
  }
  print_table(*a, nullptr);
  return 0;
}

}  // namespace kopt::cli
