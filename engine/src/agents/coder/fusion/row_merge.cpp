#include "agents/coder/fusion/row_merge.h"

#include <algorithm>
#include <map>
#include <random>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/fusion/declaration.h"
#include "artifact/index_map.h"
#include "agents/coder/fusion/pointwise.h"
#include "agents/coder/rewrites/single_pass.h"
#include "artifact/pin_config.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"
#include "verify/region_host.h"

namespace kopt::agents::fusion {

namespace {

constexpr const char* kPrefix = "fuse_";
// Up to this many (row, position) pairs every one is evaluated; above, a grid of edge and interior
// points (kSamples per axis).
constexpr int64_t kExhaustive = int64_t{1} << 18;
constexpr int kSamples = 24;

using Env = std::map<std::string, int64_t>;

bool has_call(const py::Node* n) {
  bool found = false;
  py::walk(n, [&](const py::Node* c) { found = found || c->is("Call"); });
  return found;
}

std::optional<int64_t> int_assign(const py::Node* st, const std::string& name) {
  if (assigned(st) != name) return std::nullopt;
  const py::Node* v = st->child("value");
  if (v->is("Constant") && v->const_kind == py::ConstKind::Int) return std::stoll(v->value);
  return std::nullopt;
}

// Evaluates, in order, every assignment of `stmts` that computes an integer from what is bound;
// the names in `fixed` keep the values given (Inductor's `xindex = xoffset + tl.arange(...)`).
template <class Statements>
void bind_ints(const Statements& stmts, Env& env, const std::set<std::string>& fixed) {
  for (const py::Node* st : stmts) {
    std::string n = assigned(st);
    if (n.empty() || fixed.count(n)) continue;
    if (auto v = eval_int(st->child("value"), env)) env[n] = *v;
    else env.erase(n);
  }
}

// The reduction kernel, as the merge reads it.
struct Producer {
  ir::KernelSource ks;
  int64_t rows = 0, rn = 0;
  const py::Node* loop = nullptr;             // the first loop over the row (looped kernels)
  std::vector<const py::Node*> header;        // its leading index statements (r0_index = ..., r0_1 = ...)
  std::vector<const py::Node*> scope;         // the statements an index may use: top level, then the loop's
  bool has_r0_mask = false;
};

std::optional<Producer> read_producer(const ir::Kernel& k, const std::string& source, std::string* why) {
  auto no = [&](std::string w) -> std::optional<Producer> { return *why = std::move(w), std::nullopt; };
  if (k.kind != "reduction" && k.kind != "persistent_reduction")
    return no(fmt::format("{} is a {} kernel, not a reduction", k.name, k.kind));
  for (const ir::KernelParam& q : k.signature)
    if (q.is_constexpr && q.name != "XBLOCK" && q.name != "R0_BLOCK")
      return no(fmt::format("{} is tiled by {} besides XBLOCK and R0_BLOCK", k.name, q.name));
  Producer pr;
  try {
    pr.ks = ir::parse_kernel_source(source, k.name, k.name);
  } catch (const std::exception& e) {
    return no(e.what());
  }
  for (const py::Node* st : pr.ks.entry->list("body")) {
    if (auto v = int_assign(st, "xnumel")) pr.rows = *v;
    if (auto v = int_assign(st, "r0_numel")) pr.rn = *v;
    if (assigned(st) == "r0_mask") pr.has_r0_mask = true;
    if (st->is("For")) {
      if (pr.loop) continue;  // a later pass: its statements are nothing the merge uses
      pr.loop = st;
      for (const py::Node* s : st->list("body")) {
        if (assigned(s).empty() || has_call(s)) break;
        pr.header.push_back(s);
        if (assigned(s) == "r0_mask") pr.has_r0_mask = true;
      }
      for (const py::Node* s : st->list("body")) pr.scope.push_back(s);
      continue;
    }
    pr.scope.push_back(st);
  }
  if (pr.rows <= 0 || pr.rn <= 0) return no(fmt::format("{} has no constant xnumel and r0_numel", k.name));
  if ((k.kind == "reduction") != (pr.loop != nullptr))
    return no(fmt::format("{}: a {} kernel {} a loop over the row", k.name, k.kind, pr.loop ? "with" : "without"));
  return pr;
}

// A load of the consumer rewritten for the merged loop: its pointer and index prefixed, the merged
// mask, its `other` and eviction policy kept.
std::string merged_load(const std::string& cs, const py::Node* call, const std::set<std::string>& names) {
  const auto& args = call->list("args");
  std::string out = fmt::format("tl.load({}, {}xmask", prefixed(cs, args[0], names, kPrefix), kPrefix);
  const py::Node* other = args.size() > 2 ? args[2] : keyword(call, "other");
  if (other) out += ", other=" + prefixed(cs, other, names, kPrefix);
  for (const py::Node* kw : call->list("keywords")) {
    std::string_view a = kw->ident("arg");
    if (a == "mask" || a == "other") continue;
    out += fmt::format(", {}={}", a, prefixed(cs, kw->child("value"), names, kPrefix));
  }
  return out + ")";
}

// The producer's load `call` as written, its eviction hint made evict_first (nothing reads it again).
std::string last_use(const py::Module& pm, const py::Node* call) {
  std::string text(pm.text(call));
  const py::Node* ev = keyword(call, "eviction_policy");
  if (!ev) return text.substr(0, text.size() - 1) + ", eviction_policy='evict_first')";
  uint32_t at = ev->begin.offset - call->begin.offset;
  return text.substr(0, at) + "'evict_first'" + text.substr(ev->end.offset - call->begin.offset);
}

struct Stat {
  std::string param;       // the producer's pointer parameter for it
  const py::Node* store;   // its store statement (an Expr)
  std::string cparam;      // the consumer's parameter for it
};

}  // namespace

std::optional<stitch::RegionEdit> row_merge(const Pair& p, std::string* why) {
  auto no = [&](std::string w) -> std::optional<stitch::RegionEdit> { return *why = std::move(w), std::nullopt; };
  const ir::Function& f = *p.f;
  const ir::Launch& lp = f.launches[p.producer];
  const ir::Launch& lc = f.launches[p.consumer];
  const ir::Kernel& kp = p.art->kernels[lp.kernel];
  const ir::Kernel& kc = p.art->kernels[lc.kernel];
  // The merged launch runs where the producer ran: nothing may run between the two.
  if (p.consumer != p.producer + 1)
    return no(fmt::format("launch {} runs between the producer and the consumer", p.producer + 1));
  for (const ir::Launch* l : {&lp, &lc})
    for (const ir::Arg& a : l->args)
      if (!a.keyword.empty()) return no(fmt::format("a launch passes {} by keyword", a.keyword));

  std::string w;
  auto pr = read_producer(kp, p.producer_source, &w);
  if (!pr) return no("the producer: " + w);
  auto c = read_pointwise(kc, p.consumer_source, &w, /*tile=*/false);
  if (!c) return no("the consumer: " + w);
  if (c->xnumel != pr->rows * pr->rn)
    return no(fmt::format("the consumer computes {} elements, the producer's rows {} x {}", c->xnumel, pr->rows,
                          pr->rn));
  for (const ir::KernelParam& q : kc.signature)
    if (!q.is_constexpr && q.name != "xnumel" && (q.dtype.empty() || q.dtype[0] != '*'))
      return no(fmt::format("the consumer has the scalar parameter {}", q.name));

  // The statistics: every internal buffer the two alone pass, stored once after the row's reduction.
  const py::Module& pm = *pr->ks.module;
  std::vector<Stat> stats;
  for (const std::string& b : p.internal) {
    std::string pp = param_bound(lp, b), pc = param_bound(lc, b);
    if (pp.empty() || pc.empty()) continue;
    for (size_t i = 0; i < f.launches.size(); ++i)
      if (i != p.producer && i != p.consumer)
        for (const auto& [param, text] : f.launches[i].bound)
          if (verify::storage_of(f, text) == b) return no(fmt::format("{} is passed to launch {} too", b, i));
    Stat s{pp, nullptr, pc};
    size_t uses = 0;
    py::walk(pr->ks.entry, [&](const py::Node* n) { uses += n->is("Name") && n->ident("id") == pp; });
    for (const py::Node* st : pr->ks.entry->list("body"))
      if (st->is("Expr"))
        if (auto a = store_of(st->child("value")); a && a->ptr == pp) s.store = st;
    if (!s.store || uses != 1)
      return no(fmt::format("the producer does more with {} than one store after the row's reduction", pp));
    if (!plain_mask(store_of(s.store->child("value"))->mask))
      return no(fmt::format("the producer's store of {} has its own mask", pp));
    if (tl_dtype(pointer_type(kp, pp)).empty()) return no(fmt::format("{}'s type is not known", pp));
    stats.push_back(s);
  }
  if (stats.empty()) return no("no internal buffer passes from the producer to the consumer alone");
  std::map<std::string, const Stat*> stat_of;  // the consumer's parameter -> its statistic
  for (const Stat& s : stats) stat_of[s.cparam] = &s;
  for (const auto& [cp, s] : stat_of) {
    size_t uses = 0, loads = 0;
    py::walk(c->ks.entry, [&](const py::Node* n) { uses += n->is("Name") && n->ident("id") == cp; });
    for (const Pointwise::Load& l : c->loads) loads += l.at.ptr == cp;
    if (uses != loads) return no(fmt::format("the consumer uses {} other than in loads", cp));
  }

  // The anchor: an input the consumer loads at its own x index and the producer loads over the row
  // (`tmpN = tl.load(in_ptr0 + (r0_1 + 2048*x0), ...)`).
  struct Anchor {
    const py::Node* pidx;  // the producer's load index
    const py::Node* cidx;  // the consumer's
    std::string target;    // what the producer's load assigns
    const py::Node* call;  // the producer's load
  };
  const auto& pscope = pr->scope;
  const auto& cscope = c->ks.entry->list("body");
  std::vector<Anchor> anchors;
  for (const py::Node* st : pscope) {
    auto a = assigned(st).empty() ? std::nullopt : load_of(st->child("value"));
    if (!a) continue;
    std::string s = verify::storage_of(f, arg_of(lp, a->ptr));
    for (const Pointwise::Load& l : c->loads)
      if (!s.empty() && verify::storage_of(f, arg_of(lc, l.at.ptr)) == s)
        anchors.push_back({a->index, l.at.index, assigned(st), st->child("value")});
  }
  if (anchors.empty()) return no("the consumer reads none of the producer's inputs");

  // Evaluates both kernels' index maps at (x, r): the consumer's element through each anchor, and
  // whether each statistic is read where the producer stored it for row x.
  const std::set<std::string> pfixed = {"xindex", "r0_index", "rindex"}, cfixed = {"xindex"};
  auto check = [&](const py::Node* pidx, const py::Node* cidx, int64_t x, int64_t r,
                   std::string* bad) -> std::optional<int64_t> {
    Env pe = {{"xindex", x}, {"r0_index", r}, {"rindex", r}};
    bind_ints(pscope, pe, pfixed);
    auto e = eval_int(pidx, pe);
    if (!e || *e < 0 || *e >= c->xnumel) {
      *bad = fmt::format("row {} position {} reads element {} of the anchor", x, r, e ? std::to_string(*e) : "?");
      return std::nullopt;
    }
    Env ce = {{"xindex", *e}};
    bind_ints(cscope, ce, cfixed);
    if (eval_int(cidx, ce) != e) {
      *bad = fmt::format("the consumer does not read the anchor at its x index (element {})", *e);
      return std::nullopt;
    }
    for (const Pointwise::Load& l : c->loads) {
      auto it = stat_of.find(l.at.ptr);
      if (it == stat_of.end()) continue;
      auto want = eval_int(store_of(it->second->store->child("value"))->index, pe);
      auto got = eval_int(l.at.index, ce);
      if (!want || want != got) {
        *bad = fmt::format("element {} (row {}) reads {} at {}, the producer stored row {} at {}", *e, x, l.at.ptr,
                           got ? std::to_string(*got) : "?", x, want ? std::to_string(*want) : "?");
        return std::nullopt;
      }
    }
    return e;
  };
  // Every (x, r) for small sizes; above, edges (0, 1, last, next to last) and interior points of each
  // axis, every pair of them.
  const bool exhaustive = pr->rows * pr->rn <= kExhaustive;
  auto points = [&](int64_t n) {
    std::set<int64_t> s;
    if (exhaustive) {
      for (int64_t i = 0; i < n; ++i) s.insert(i);
    } else {
      s = {0, 1, n / 2, n - 2, n - 1};
      std::mt19937_64 g(n);
      while (static_cast<int>(s.size()) < std::min<int64_t>(n, kSamples)) s.insert(static_cast<int64_t>(g() % n));
    }
    std::vector<int64_t> v;
    for (int64_t i : s)
      if (i >= 0 && i < n) v.push_back(i);
    return v;
  };
  const std::vector<int64_t> xs = points(pr->rows), rs = points(pr->rn);
  const Anchor* anchor = nullptr;
  std::string bad;
  for (const Anchor& an : anchors) {
    bad.clear();
    std::set<int64_t> seen;
    for (size_t i = 0; i < xs.size() && bad.empty(); ++i)
      for (size_t j = 0; j < rs.size() && bad.empty(); ++j)
        if (auto e = check(an.pidx, an.cidx, xs[i], rs[j], &bad); e && !seen.insert(*e).second)
          bad = fmt::format("element {} is reached twice", *e);
    if (bad.empty()) {
      anchor = &an;
      break;
    }
  }
  if (!anchor) return no("the rows do not map onto the consumer's elements: " + bad);
  // Nothing orders the two passes' memory accesses within a program (no barrier between them): the
  // second must not read what the first wrote, nor write what the first reads beyond the program's
  // own rows of the anchor.
  {
    std::set<std::string> pw, preads, cw, creads, internal;
    verify::accesses(kp, lp, f, pw, preads);
    verify::accesses(kc, lc, f, cw, creads);
    for (const Stat& st : stats) internal.insert(verify::storage_of(f, arg_of(lp, st.param)));
    std::string anchor_storage;
    for (const Pointwise::Load& l : c->loads)
      if (l.at.index == anchor->cidx) anchor_storage = verify::storage_of(f, arg_of(lc, l.at.ptr));
    for (const std::string& st : creads)
      if (pw.count(st) && !internal.count(st))
        return no(fmt::format("the consumer reads {}, which the producer writes", st));
    for (const std::string& st : cw)
      if (preads.count(st) && st != anchor_storage)
        return no(fmt::format("the consumer writes {}, which the producer reads", st));
  }
  // The anchor's index must be computable in the merged loop: from top-level names or the loop's header.
  std::set<std::string> visible;
  for (const ir::KernelParam& q : kp.signature) visible.insert(q.name);
  for (const py::Node* st : pr->ks.entry->list("body")) {
    if (st == pr->loop) break;
    visible.insert(assigned(st));
  }
  for (const py::Node* st : pr->header) visible.insert(assigned(st));
  std::string missing;
  py::walk(anchor->pidx, [&](const py::Node* n) {
    if (n->is("Name") && !visible.count(std::string(n->ident("id")))) missing = std::string(n->ident("id"));
  });
  if (!missing.empty())
    return no(fmt::format("the anchor's index uses {}, computed inside the producer's loop", missing));

  // The merged source. The statistics' stores become values held for the second pass.
  const std::string& ps = p.producer_source;
  const std::string& cs = p.consumer_source;
  std::vector<py::Edit> edits;
  for (size_t i = 0; i < stats.size(); ++i) {
    auto a = store_of(stats[i].store->child("value"));
    edits.push_back({stats[i].store->begin.offset, stats[i].store->end.offset,
                     fmt::format("{}s{} = ({}).to({})", kPrefix, i, pm.text(a->value),
                                 tl_dtype(pointer_type(kp, stats[i].param)))});
  }
  // The first pass keeps what the second re-reads in L2.
  std::set<std::string> reread;
  for (const Pointwise::Load& l : c->loads) reread.insert(verify::storage_of(f, arg_of(lc, l.at.ptr)));
  if (pr->loop)
    py::walk(pr->loop, [&](const py::Node* n) {
      auto a = n->is("Call") ? load_of(n) : std::nullopt;
      if (!a || !reread.count(verify::storage_of(f, arg_of(lp, a->ptr)))) return;
      const py::Node* ev = keyword(n, "eviction_policy");
      if (ev && pm.text(ev) == "'evict_first'") edits.push_back({ev->begin.offset, ev->end.offset, "'evict_last'"});
    });

  // The second pass: the consumer's statements on the rows' elements.
  std::set<std::string> names = c->locals;
  names.insert(c->whole.begin(), c->whole.end());
  for (const ir::KernelParam& q : kc.signature)
    if (!q.is_constexpr) names.insert(q.name);
  names.insert("xindex");
  names.insert("xmask");
  const py::Node* last = pr->ks.entry->list("body").back();
  std::string ind(pr->loop ? pr->loop->begin.col : last->begin.col, ' ');
  std::string pass;
  if (pr->loop) {
    pass += fmt::format("{}for {} in {}:\n", ind, pm.text(pr->loop->child("target")), pm.text(pr->loop->child("iter")));
    ind += "    ";
    for (const py::Node* h : pr->header) pass += ind + std::string(pm.text(h)) + "\n";
  }
  pass += fmt::format("{}{}xindex = {}\n", ind, kPrefix, pm.text(anchor->pidx));
  pass += fmt::format("{}{}xmask = {}xmask\n", ind, kPrefix, pr->has_r0_mask ? "r0_mask & " : "");
  size_t cstat = 0;
  for (const py::Node* st : c->ks.entry->list("body")) {
    auto ld = std::find_if(c->loads.begin(), c->loads.end(), [&](const Pointwise::Load& l) { return l.stmt == st; });
    bool structure = std::count(c->index_stmts.begin(), c->index_stmts.end(), st) == 0 &&
                     std::count(c->body.begin(), c->body.end(), st) == 0 && st != c->store_stmt &&
                     ld == c->loads.end();
    if (structure) continue;  // xnumel, xoffset, xindex, xmask: the merged kernel has its own
    if (ld != c->loads.end()) {
      auto it = stat_of.find(ld->at.ptr);
      // The anchor's element is the producer's own load: a persistent producer still holds it in
      // registers; a looped one loads it again as it did (its last use: evict_first), in a form the
      // single-pass rewrite knows for a re-load of the first pass's.
      std::string value = it != stat_of.end()      ? fmt::format("{}s{}", kPrefix, it->second - stats.data())
                          : ld->at.index != anchor->cidx ? merged_load(cs, st->child("value"), names)
                          : !pr->loop                    ? anchor->target
                                                         : last_use(pm, anchor->call);
      cstat += it != stat_of.end();
      pass += fmt::format("{}{}{} = {}\n", ind, kPrefix, ld->target, value);
      continue;
    }
    if (st == c->store_stmt) {
      pass += fmt::format("{}tl.store({}{} + ({}), {}, {}xmask)\n", ind, kPrefix, c->store.ptr,
                          prefixed(cs, c->store.index, names, kPrefix), prefixed(cs, c->store.value, names, kPrefix),
                          kPrefix);
      continue;
    }
    pass += ind + prefixed(cs, st, names, kPrefix) + "\n";
  }
  if (!cstat) return no("the consumer loads none of the statistics");
  edits.push_back({last->end.offset, last->end.offset, "\n" + pass.substr(0, pass.size() - 1)});
  std::string source = py::apply_edits(ps, std::move(edits));

  // The merged signature: the producer's parameters but the statistics, with the consumer's pointers
  // the second pass still uses (prefixed) before its sizes.
  std::vector<DeclParam> params, theirs;
  std::vector<std::string> args, their_args, mutated;
  for (const ir::KernelParam& q : kc.signature) {
    std::string n = kPrefix + q.name;
    if (q.is_constexpr || q.name == "xnumel" || stat_of.count(q.name)) continue;
    if (!std::regex_search(pass, std::regex("\\b" + n + "\\b"))) continue;  // the re-read anchor, now the producer's
    theirs.push_back({n, q.dtype, divisible(kc, q.name)});
    their_args.push_back(arg_of(lc, q.name));
    if (std::count(kc.mutated_args.begin(), kc.mutated_args.end(), q.name)) mutated.push_back(n);
  }
  bool inserted = false;
  for (const ir::KernelParam& q : kp.signature) {
    if (std::any_of(stats.begin(), stats.end(), [&](const Stat& s) { return s.param == q.name; })) continue;
    bool pointer = !q.dtype.empty() && q.dtype[0] == '*';
    if (!pointer && !inserted) {
      params.insert(params.end(), theirs.begin(), theirs.end());
      args.insert(args.end(), their_args.begin(), their_args.end());
      inserted = true;
    }
    params.push_back({q.name, q.is_constexpr ? "constexpr" : q.dtype, divisible(kp, q.name)});
    if (!q.is_constexpr) args.push_back(arg_of(lp, q.name));
  }
  if (!inserted) return no("the producer has no size parameters");
  mutated.insert(mutated.begin(), kp.mutated_args.begin(), kp.mutated_args.end());
  std::string name = fused_name(kp, kc);
  auto declared = redeclare(source, kp.name, kp.entry.empty() ? kp.name : kp.entry, name, params, mutated, &w);
  if (!declared) return no("the producer: " + w);
  source = *declared;
  try {
    ir::parse_kernel_source(source, name, name);
  } catch (const std::exception& e) {
    return no(std::string("the merged kernel does not parse: ") + e.what());
  }

  stitch::RegionEdit e;
  e.launches = {p.producer, p.consumer};
  for (const Stat& s : stats) e.internal.push_back(verify::storage_of(f, arg_of(lp, s.param)));
  e.kernel = name;
  e.source = source;
  e.args = fmt::format("{}", fmt::join(args, ", "));
  return e;
}

std::vector<std::pair<std::string, stitch::RegionEdit>> row_merge_variants(const stitch::RegionEdit& merged) {
  std::string why;
  auto sp = rewrites::single_pass(merged.source, merged.kernel, {}, &why);
  if (!sp) return {};
  std::vector<std::pair<std::string, stitch::RegionEdit>> out;
  int last = 0;
  for (int64_t per_thread : {16, 8}) {
    int warps = static_cast<int>(std::clamp<int64_t>(sp->block / (32 * per_thread), 1, 16));
    if (warps == last) continue;
    last = warps;
    nlohmann::json cfg = {{"XBLOCK", 1}, {"R0_BLOCK", sp->block}, {"num_warps", warps}, {"num_stages", 1}};
    stitch::RegionEdit v = merged;
    try {
      v.source = ir::pin_config(sp->source, merged.kernel, cfg);
    } catch (const std::exception&) {
      return out;
    }
    out.emplace_back(fmt::format("single pass: each row read once, {}", ir::describe_config(cfg)), std::move(v));
  }
  return out;
}

}  // namespace kopt::agents::fusion
