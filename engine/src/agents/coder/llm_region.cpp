#include "agents/coder/llm_region.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/fusion/declaration.h"
#include "agents/coder/fusion/pair.h"
#include "profile/regions.h"
#include "verify/region_host.h"

namespace kopt::agents::llm_support {

namespace {

std::string source_of(const ir::Artifact& a, const ir::Span& s) {
  return a.module->source().substr(s.begin.offset, s.end.offset - s.begin.offset);
}

// A buffer's Triton pointer type: that of a region launch's parameter bound to it.
std::string pointer_type_of(const RegionUnit& u, const std::string& storage) {
  for (size_t i : u.region->launches) {
    const ir::Launch& l = u.f->launches[i];
    for (const auto& [param, text] : l.bound)
      if (verify::storage_of(*u.f, text) == storage) {
        std::string t = fusion::pointer_type(u.art->kernels[l.kernel], param);
        if (!t.empty()) return t;
      }
  }
  return "";
}

uint64_t next_pow2(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

struct Param {
  std::string name;
  bool constexpr_ = false;
};

// The parameters of `def NAME(...)`, each with whether it is annotated tl.constexpr.
std::optional<std::vector<Param>> def_params(const std::string& fn, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(fn, m, std::regex("^def " + name + R"(\s*\(([^)]*)\)\s*:)"))) return std::nullopt;
  std::vector<Param> out;
  std::string all = m[1];
  size_t at = 0;
  while (at <= all.size()) {
    size_t comma = std::min(all.find(',', at), all.size());
    std::string p = all.substr(at, comma - at);
    at = comma + 1;
    std::smatch pm;
    if (std::regex_match(p, std::regex(R"(\s*)"))) continue;
    if (!std::regex_match(p, pm, std::regex(R"(\s*(\w+)\s*(:\s*tl\.constexpr)?\s*)"))) return std::nullopt;
    out.push_back({pm[1], pm[2].matched});
  }
  return out;
}

std::optional<int64_t> body_constant(const std::string& fn, const std::string& var) {
  std::smatch m;
  if (!std::regex_search(fn, m, std::regex("\\n\\s+" + var + R"(\s*=\s*(\d+)\s*\n)"))) return std::nullopt;
  return std::stoll(m[1]);
}

}  // namespace

std::string region_kernel_name(const RegionUnit& u) {
  return fmt::format("triton_region_g{}_r{}", u.graph, u.index);
}

std::map<std::string, std::string> region_vars(const RegionUnit& u) {
  const profile::Region& r = *u.region;
  const ir::Launch& first = u.f->launches[r.launches.front()];
  const ir::Launch& last = u.f->launches[r.launches.back()];
  // From the first launch's line start, so the launches keep their indentation.
  uint32_t from = first.span.begin.offset - first.span.begin.col;
  std::string host = u.art->module->source().substr(from, last.span.end.offset - from);
  std::string buffers;
  for (const auto& [what, list] : {std::pair{"input", &r.inputs}, {"output", &r.outputs}, {"internal", &r.internal}})
    for (const profile::RegionBuffer& b : *list)
      buffers += fmt::format("  {} ({}): {}, {} bytes\n", b.name, what, pointer_type_of(u, b.name), b.bytes);
  std::string kernels;
  std::set<size_t> seen;
  for (size_t i : r.launches) {
    const ir::Kernel& k = u.art->kernels[u.f->launches[i].kernel];
    if (!seen.insert(u.f->launches[i].kernel).second) continue;
    kernels += fmt::format("\nKernel {} ({}):\n```python\n{}\n```\n", k.name, k.kind, k.source);
  }
  std::string facts = fmt::format(
      "Region {} of graph {}: {} launches of call() between vendor calls.\n"
      "The host function call():\n```python\n{}\n```\n"
      "The region's launches, as call() makes them:\n```python\n{}\n```\n"
      "Its buffers (type, bytes):\n{}{}",
      u.index, u.graph, r.launches.size(), source_of(*u.art, u.f->span), host, buffers, kernels);
  auto join = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
  };
  return {{"facts", facts},
          {"name", region_kernel_name(u)},
          {"inputs", join(profile::names(r.inputs))},
          {"outputs", join(profile::names(r.outputs))},
          {"internal", join(profile::names(r.internal))}};
}

Parsed<fusion::RegionCandidate> region_candidate(const RegionUnit& u, const std::string& reply) {
  auto no = [](std::string w) -> Parsed<fusion::RegionCandidate> { return {std::nullopt, std::move(w)}; };
  const profile::Region& r = *u.region;
  const std::string name = region_kernel_name(u);
  Parsed<std::string> block = one_code_block(reply);
  if (!block.value) return no(block.reason);
  Parsed<std::string> fn = entry_function(*block.value, name);
  if (!fn.value) return no(fn.reason);
  auto params = def_params(*fn.value, name);
  if (!params) return no(fmt::format("the parameters of {} are not plain names (a default, a starred one)", name));

  // Pointer parameters name the region's buffers; then the sizes; then the block constexprs.
  std::set<std::string> buffers;
  for (const auto& b : r.inputs) buffers.insert(b.name);
  for (const auto& b : r.outputs) buffers.insert(b.name);
  std::vector<fusion::DeclParam> decl;
  std::vector<std::string> args, mutated;
  std::optional<int64_t> xnumel, r0_numel;
  bool xblock = false, r0block = false;
  for (const Param& p : *params) {
    if (p.constexpr_) {
      if (p.name == "XBLOCK") xblock = true;
      else if (p.name == "R0_BLOCK") r0block = true;
      else return no(fmt::format("the constexpr parameter {}: only XBLOCK and R0_BLOCK are launched", p.name));
      decl.push_back({p.name, "constexpr"});
      continue;
    }
    if (p.name == "xnumel" || p.name == "r0_numel") {
      auto v = body_constant(*fn.value, p.name);
      if (!v || *v <= 0) return no(fmt::format("the body does not assign {} a positive integer", p.name));
      (p.name == "xnumel" ? xnumel : r0_numel) = v;
      decl.push_back({p.name, "i32"});
      args.push_back(std::to_string(*v));
      continue;
    }
    if (!buffers.count(p.name))
      return no(fmt::format("the parameter {} names none of the region's inputs and outputs", p.name));
    std::string t = pointer_type_of(u, p.name);
    if (t.empty()) return no(fmt::format("the type of {} is not known", p.name));
    decl.push_back({p.name, t});  // no alignment promised: the buffers are the LLM's choice
    args.push_back(p.name);
    bool in = std::any_of(r.inputs.begin(), r.inputs.end(), [&](const auto& b) { return b.name == p.name; });
    bool out = std::any_of(r.outputs.begin(), r.outputs.end(), [&](const auto& b) { return b.name == p.name; });
    if (in && out) mutated.push_back(p.name);
  }
  if (!xnumel || !xblock) return no("the kernel has no xnumel and XBLOCK parameters");
  if (r0_numel.has_value() != r0block) return no("r0_numel and R0_BLOCK come together or not at all");

  // The declaration: a region kernel's, its heuristics and sizes made the fused kernel's.
  const std::string kind = r0_numel ? "reduction" : "pointwise";
  const ir::Kernel* base = nullptr;
  for (size_t i : r.launches) {
    const ir::Kernel& k = u.art->kernels[u.f->launches[i].kernel];
    if (!base || k.kind == kind) base = &k;
    if (k.kind == kind) break;
  }
  const std::string& bs = base->source;
  size_t deco = bs.find("@triton_heuristics."), jit = bs.find("@triton.jit", deco);
  if (deco == std::string::npos || jit == std::string::npos)
    return no(fmt::format("{} has no heuristics declaration to shape the fused kernel's on", base->name));
  std::string d = bs.substr(deco, jit - deco);
  d = std::regex_replace(d, std::regex(R"(^@triton_heuristics\.\w+\()"), "@triton_heuristics." + kind + "(");
  std::string hints = r0_numel ? fmt::format("size_hints={{'x': {}, 'r0_': {}}},", next_pow2(*xnumel),
                                             next_pow2(*r0_numel))
                               : fmt::format("size_hints={{'x': {}}},", next_pow2(*xnumel));
  d = std::regex_replace(d, std::regex(R"(size_hints=\{[^}]*\},)"), hints, std::regex_constants::format_first_only);
  if (kind == "pointwise") {
    d = std::regex_replace(d, std::regex(R"(\n\s*reduction_hint=[^,\n]*,)"), "");
  } else {
    d = std::regex_replace(d, std::regex(R"(,\s*\n\s*min_elem_per_thread=\d+)"), "");
    d = std::regex_replace(d, std::regex(R"(,\s*\n\s*tile_hint=[^,\n]*)"), "");
    if (d.find("reduction_hint=") == std::string::npos)
      d = std::regex_replace(d, std::regex(R"((size_hints=\{[^}]*\},))"),
                             "$1\n    reduction_hint=ReductionHint.DEFAULT,", std::regex_constants::format_first_only);
  }
  std::string why;
  auto source = fusion::redeclare(bs.substr(0, deco) + d + "@triton.jit\n" + *fn.value, base->name, name, name, decl,
                                  mutated, &why);
  if (!source) return no(why);
  try {
    ir::parse_kernel_source(*source, name, name);
  } catch (const std::exception& e) {
    return no(std::string("the function does not parse: ") + e.what());
  }

  fusion::RegionCandidate c;
  c.origin = "llm:region";
  c.description = fmt::format("LLM fusion of the region's {} launches into {}", r.launches.size(), name);
  c.edit.launches = r.launches;
  c.edit.internal = profile::names(r.internal);
  c.edit.kernel = name;
  c.edit.source = *source;
  c.edit.args = fmt::format("{}", fmt::join(args, ", "));
  return {c, ""};
}

}  // namespace kopt::agents::llm_support
