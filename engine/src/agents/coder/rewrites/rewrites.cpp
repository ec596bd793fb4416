#include "agents/coder/rewrites/rewrites.h"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "agents/coder/rewrites/one_plus.h"
#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/single_pass.h"
#include "agents/coder/rewrites/masked_modulo.h"
#include "agents/coder/rewrites/softmax_chunks.h"
#include "agents/coder/rewrites/softplus.h"
#include "agents/coder/rewrites/welford_chunks.h"
#include "agents/coder/rewrites/proven_masks.h"
#include "agents/coder/rewrites/row_tiles.h"
#include "agents/coder/rewrites/tail_mask.h"
#include "agents/coder/rewrites/transposed_tile.h"
#include "agents/coder/rewrites/x_order.h"
#include "artifact/ir.h"
#include "artifact/pin_config.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

namespace {

using py::Node;
using py::Edit;
using py::walk;
using namespace detail;

// Whether 32-bit index math is safe for one launch: every integer argument (numels, strides
// passed as ints) and every tensor's span, in elements, stays below 2^30. The margin covers the
// lanes past a numel that a block computes indices for (masked, never dereferenced).
bool fits_int32(const nlohmann::json& launch, std::string* why) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  if (!launch.contains("args") || !launch["args"].is_array()) {
    say(why, "a launch record has no arguments");
    return false;
  }
  size_t i = 0;
  for (const nlohmann::json& a : launch["args"]) {
    ++i;
    if (a.contains("value") && a["value"].is_number_integer() && std::abs(a["value"].get<int64_t>()) >= kLimit) {
      say(why, fmt::format("argument {} is {}, not provably below 2^30", i, a["value"].get<int64_t>()));
      return false;
    }
    if (!a.contains("shape")) continue;
    if (!a.contains("stride") || a["stride"].size() != a["shape"].size()) {
      say(why, fmt::format("argument {} is a tensor without strides", i));
      return false;
    }
    int64_t span = 1;  // elements from the first to one past the last addressed
    for (size_t d = 0; d < a["shape"].size(); ++d) {
      int64_t n = a["shape"][d].get<int64_t>(), s = std::abs(a["stride"][d].get<int64_t>());
      if (n == 0) span = 0;
      if (span == 0) break;
      if (n > kLimit || s > kLimit) span = kLimit;
      else span += (n - 1) * s;
      if (span >= kLimit) {
        say(why, fmt::format("argument {} spans {} elements or more, not provably below 2^30", i, span));
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> int32_indexing(const std::string& source, const std::string& name,
                                          const std::vector<nlohmann::json>& launches, std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  // `<index expr>.to(tl.int64)` where the receiver is built from program ids or aranges:
  // Inductor's widening of offsets and indices. Casts of loaded values are left alone.
  std::vector<Edit> edits;
  walk(ks->entry, [&](const Node* n) {
    if (!n->is("Call") || n->list("args").size() != 1 || !n->list("keywords").empty()) return;
    const Node* f = n->child("func");
    if (!f || !f->is("Attribute") || f->ident("attr") != "to" || !is_tl(n->list("args")[0], "int64")) return;
    const Node* recv = f->child("value");
    bool index =
        py::any_node(recv, [](const Node* m) { return is_tl_call(m, "program_id") || is_tl_call(m, "arange"); });
    if (index) edits.push_back({recv->end.offset, n->end.offset, ""});
  });
  if (edits.empty()) {
    say(why, "int32 indexing: the kernel does not widen its indices to 64 bits");
    return std::nullopt;
  }
  if (launches.empty()) {
    say(why, "int32 indexing: no recorded launch to bound the indices by");
    return std::nullopt;
  }
  for (const nlohmann::json& l : launches) {
    std::string reason;
    if (!fits_int32(l, &reason)) {
      say(why, "int32 indexing: " + reason);
      return std::nullopt;
    }
  }
  return py::apply_edits(source, edits);
}

std::vector<std::pair<std::string, std::string>> eviction_hints(const std::string& source, const std::string& name,
                                                                std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return {};
  std::vector<const Node*> loops;
  for (const Node* s : ks->entry->list("body"))
    if (s->is("For")) loops.push_back(s);
  if (loops.size() < 2) {
    say(why, "eviction hints: not a looped reduction with two passes");
    return {};
  }
  auto loads_in = [](const Node* root) {
    return py::find_all(root, [](const Node* n) { return is_tl_call(n, "load") && !n->list("args").empty(); });
  };
  auto pointers = [](const std::vector<const Node*>& loads) {
    std::set<std::string_view> out;
    for (const Node* l : loads)
      walk(l->list("args")[0], [&](const Node* m) {
        if (m->is("Name") && m->ident("id").find("ptr") != std::string_view::npos) out.insert(m->ident("id"));
      });
    return out;
  };
  std::vector<const Node*> first = loads_in(loops.front()), last = loads_in(loops.back());
  std::set<std::string_view> a = pointers(first), b = pointers(last), shared;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(shared, shared.end()));
  if (shared.empty()) {
    say(why, "eviction hints: the first and last pass load no pointer in common");
    return {};
  }
  const std::string& src = source;
  // The edit that sets (policy non-empty) or removes (empty) a load's eviction_policy keyword.
  auto set_policy = [&](const Node* call, const std::string& policy) -> std::optional<Edit> {
    const Node* kw = nullptr;
    for (const Node* k : call->list("keywords"))
      if (k->ident("arg") == "eviction_policy") kw = k;
    if (kw && !policy.empty()) {
      const Node* v = kw->child("value");
      return Edit{v->begin.offset, v->end.offset, "'" + policy + "'"};
    }
    if (kw) {  // from the end of the argument before it, so its comma goes too
      uint32_t prev = call->child("func")->end.offset + 1;
      for (const char* field : {"args", "keywords"})
        for (const Node* x : call->list(field))
          if (x->end.offset <= kw->begin.offset) prev = std::max(prev, x->end.offset);
      return Edit{prev, kw->end.offset, ""};
    }
    if (policy.empty()) return std::nullopt;
    uint32_t close = call->end.offset - 1;  // the ')'
    uint32_t p = close;
    while (p > 0 && std::isspace(static_cast<unsigned char>(src[p - 1]))) --p;
    std::string sep = (p > 0 && src[p - 1] == ',') ? " " : ", ";
    return Edit{p, p, sep + "eviction_policy='" + policy + "'"};
  };
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<Edit> two_pass, none;
  for (const Node* l : first)
    if (auto e = set_policy(l, "evict_last")) two_pass.push_back(*e);
  for (const Node* l : last)
    if (auto e = set_policy(l, "evict_first")) two_pass.push_back(*e);
  walk(ks->entry, [&](const Node* n) {
    if (is_tl_call(n, "load"))
      if (auto e = set_policy(n, "")) none.push_back(*e);
  });
  std::string s = py::apply_edits(source, two_pass);
  if (s != source) out.emplace_back("eviction hints: evict_last in the first pass, evict_first in the last", s);
  s = py::apply_edits(source, none);
  if (s != source) out.emplace_back("eviction hints removed", s);
  if (out.empty()) say(why, "eviction hints: every variant equals the kernel's own source");
  return out;
}

std::vector<std::pair<std::string, std::string>> loop_stages(const std::string& source, const std::string& name,
                                                              std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return {};
  // The reduction loops: `for ... in tl.range(a, b, c)` at the top of the body, loading, without
  // a stage count of their own.
  std::vector<uint32_t> at;
  for (const Node* s : ks->entry->list("body")) {
    if (!s->is("For")) continue;
    const Node* it = s->child("iter");
    if (!is_tl_call(it, "range") || it->list("args").size() != 3 || !it->list("keywords").empty()) continue;
    if (py::any_node(s, [](const Node* n) { return is_tl_call(n, "load"); }))
      at.push_back(it->list("args").back()->end.offset);
  }
  if (at.empty()) {
    say(why, "loop stages: no `tl.range` loop that loads");
    return {};
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (int stages : {2, 3}) {
    std::vector<Edit> edits;
    for (uint32_t p : at) edits.push_back({p, p, fmt::format(", num_stages={}", stages)});
    out.emplace_back(fmt::format("loop stages: {} reduction loop(s) pipelined over {} stages", at.size(), stages),
                     py::apply_edits(source, edits));
  }
  return out;
}

namespace {

// A rewrite keeping the kernel's blocks and grid runs pinned to the config Inductor's autotuner chose
// for the baseline (when the worker reported one), so it keeps the baseline's reduction layout and
// rounding (an x-order rewrite is then bit-equal to it), and the stitched module runs the config the
// gates verified instead of autotuning again. The tuner steps from it.
std::vector<Candidate> pinned(const KernelProfile& k, std::vector<std::pair<std::string, std::string>> rewritten) {
  const nlohmann::json* chosen = nullptr;
  if (!k.launches.empty() && k.launches.front().contains("config") && k.launches.front()["config"].is_object())
    chosen = &k.launches.front()["config"];
  std::vector<Candidate> out;
  for (auto& [description, source] : rewritten) {
    Candidate c;
    c.origin = "rewrite";
    c.description = std::move(description);
    c.source = std::move(source);
    if (chosen)
      if (auto pin = ir::pin_baseline_config(*k.kernel, c.source, *chosen)) {
        c.source = std::move(*pin);
        c.config = *chosen;
        c.own_config_space = true;
        c.description += " @ " + ir::describe_config(*chosen);
      }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Candidate> int32_rewrite(const KernelProfile& k, std::string* why) {
  auto s = int32_indexing(k.kernel->source, k.kernel->name, k.launches, why);
  if (!s) return {};
  return pinned(k, {{"int32 indexing: 64-bit index widening dropped (every launch's numels and spans < 2^30)", *s}});
}

std::vector<Candidate> eviction_rewrite(const KernelProfile& k, std::string* why) {
  return pinned(k, eviction_hints(k.kernel->source, k.kernel->name, why));
}

std::vector<Candidate> loop_stages_rewrite(const KernelProfile& k, std::string* why) {
  return pinned(k, loop_stages(k.kernel->source, k.kernel->name, why));
}

std::vector<Candidate> one_plus_rewrite(const KernelProfile& k, std::string* why) {
  auto op = one_plus(k.kernel->source, k.kernel->name, stores_half_only(*k.kernel), why);
  if (!op) return {};
  return pinned(k, {{fmt::format("one plus: GELU's 1 + erf(x) ({}{}) and 1 + tanh(x) ({}) in branch-free closed forms",
                                 op->erf, op->erf && op->half_fit ? ", the half-precision fit" : "", op->tanh),
                     op->source}});
}

// Reductions only: their rows (a split reduction's partial rows above all) may sit in memory in
// another order than their numbering; a pointwise kernel's x is its contiguous output.
std::vector<Candidate> x_order_rewrite(const KernelProfile& k, std::string* why) {
  if (k.kernel->kind != "reduction" && k.kernel->kind != "persistent_reduction") {
    say(why, "x order: not a reduction kernel");
    return {};
  }
  return pinned(k, x_order(k.kernel->source, k.kernel->name, why));
}

std::vector<Candidate> proven_masks_rewrite(const KernelProfile& k, std::string* why) {
  auto pm = proven_masks(k.kernel->source, k.kernel->name, why);
  if (!pm) return {};
  return pinned(k, {{fmt::format("proven masks: {} bounds check(s) on {} load(s) dropped (true for every element)",
                                 pm->dropped, pm->loads),
                     pm->source}});
}

std::vector<Candidate> masked_modulo_rewrite(const KernelProfile& k, std::string* why) {
  auto mm = masked_modulo(k.kernel->source, k.kernel->name, why);
  if (!mm) return {};
  return pinned(k, {{fmt::format("masked modulo: {} load index modulo(s) its mask bounds dropped", mm->dropped),
                     mm->source}});
}

std::vector<Candidate> welford_chunks_rewrite(const KernelProfile& k, std::string* why) {
  auto wc = welford_chunks(k.kernel->source, k.kernel->name, why);
  if (!wc) return {};
  return pinned(k, {{fmt::format("welford chunks: {} per-element Welford update(s) as per-chunk statistics merged "
                                 "once a chunk (no division per element)", wc->accumulators),
                     wc->source}});
}

std::vector<Candidate> softmax_chunks_rewrite(const KernelProfile& k, std::string* why) {
  auto sc = softmax_chunks(k.kernel->source, why);
  if (!sc) return {};
  return pinned(k, {{fmt::format("softmax chunks: {} per-element online softmax update(s) as one max a chunk (one "
                                 "exp an element)", sc->accumulators),
                     sc->source}});
}

std::vector<Candidate> softplus_rewrite(const KernelProfile& k, std::string* why) {
  auto sp = softplus(k.kernel->source, why);
  if (!sp) return {};
  return pinned(k, {{fmt::format("softplus: {} log1p(exp(x)) as log2(1 + exp2(x log2 e)) ln 2 (two MUFU "
                                 "approximations)", sp->rewritten),
                     sp->source}});
}

std::vector<Candidate> tail_mask_rewrite(const KernelProfile& k, std::string* why) {
  auto s = tail_mask(*k.kernel, why);
  if (!s) return {};
  return pinned(k, {{"tail mask: every block but the last unmasked (whole-vector accesses)", *s}});
}

bool any_kernel(const ir::Kernel&) { return true; }
bool pointwise_kernel(const ir::Kernel& k) { return k.kind == "pointwise"; }

// The source rewrites, registered once, in the order their declines are reported. The ones that
// change the memory traffic (single_pass.h, transposed_tile.h) lead: their candidates come before the
// others'. A rewrite that does not take a kernel's kind is skipped without a decline.
struct Rewrite {
  const char* name;
  bool leads;
  bool (*takes)(const ir::Kernel& k);
  std::vector<Candidate> (*generate)(const KernelProfile& k, std::string* why);  // none: declined, why said
};

const Rewrite kRewrites[] = {
    {"int32_indexing", false, any_kernel, int32_rewrite},
    {"eviction_hints", false, any_kernel, eviction_rewrite},
    {"loop_stages", false, any_kernel, loop_stages_rewrite},
    {"one_plus", false, any_kernel, one_plus_rewrite},
    {"x_order", false, any_kernel, x_order_rewrite},
    {"single_pass", true, any_kernel, single_pass_candidates},
    {"transposed_tile", true, pointwise_kernel, transposed_tile},
    {"proven_masks", false, pointwise_kernel, proven_masks_rewrite},
    {"row_tiles", false, pointwise_kernel, row_tiles},
    {"tail_mask", false, pointwise_kernel, tail_mask_rewrite},
    {"masked_modulo", false, any_kernel, masked_modulo_rewrite},
    {"welford_chunks", false, any_kernel, welford_chunks_rewrite},
    {"softmax_chunks", false, any_kernel, softmax_chunks_rewrite},
    {"softplus", false, any_kernel, softplus_rewrite},
};

}  // namespace

std::vector<Candidate> candidates(const KernelProfile& k, std::string* why) {
  std::vector<Candidate> leading, others;
  std::vector<std::string> declined;
  for (const Rewrite& r : kRewrites) {
    if (!r.takes(*k.kernel)) continue;
    std::string reason;
    std::vector<Candidate> made = r.generate(k, &reason);
    if (made.empty()) declined.push_back(reason);
    std::vector<Candidate>& to = r.leads ? leading : others;
    to.insert(to.end(), std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
  }
  leading.insert(leading.end(), std::make_move_iterator(others.begin()), std::make_move_iterator(others.end()));
  if (why) {
    why->clear();
    for (const std::string& d : declined) *why += (why->empty() ? "" : "; ") + d;
  }
  return leading;
}

}  // namespace kopt::agents::rewrites
