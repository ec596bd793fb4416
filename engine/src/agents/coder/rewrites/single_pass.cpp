#include "agents/coder/rewrites/single_pass.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "artifact/index_map.h"
#include "agents/coder/rewrites/softmax_folds.h"
#include "agents/coder/rewrites/source_edit.h"
#include "artifact/pin_config.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

namespace {

using py::Node;
using py::Edit;
using py::walk;
using namespace detail;

// `for r0_offset in tl.range(0, r0_numel, R0_BLOCK):` (or plain range), Inductor's reduction loop.
bool is_row_loop(const Node* s) {
  if (!s->is("For") || !is_name(s->child("target"), "r0_offset")) return false;
  const Node* it = s->child("iter");
  if (!it || !it->is("Call")) return false;
  const Node* f = it->child("func");
  if (!(is_tl(f, "range") || is_name(f, "range"))) return false;
  const auto& a = it->list("args");
  return a.size() == 3 && a[0]->is("Constant") && a[0]->value == "0" && is_name(a[1], "r0_numel") &&
         is_name(a[2], "R0_BLOCK") && it->list("keywords").empty();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The entry's row loops, top-level and in order; nothing with the reason when the body has any
// other loop or fewer than two passes.
std::optional<std::vector<const Node*>> row_loops(const Node* entry, std::string* why) {
  std::vector<const Node*> loops;
  for (const Node* s : entry->list("body")) {
    if (is_row_loop(s)) {
      loops.push_back(s);
    } else if (s->is("For") || s->is("While")) {
      say(why, "single pass: a loop other than the reduction's row loop");
      return std::nullopt;
    }
  }
  if (loops.size() < 2) {
    say(why, "single pass: not a looped reduction with two passes");
    return std::nullopt;
  }
  return loops;
}

// Step 1: every row loop becomes `r0_offset = 0` and its body, one indent level out.
std::optional<std::string> unroll_loops(const std::string& source, const std::vector<const Node*>& loops,
                                        std::string* why) {
  std::vector<std::string> lines = lines_of(source);
  for (const Node* loop : loops) {
    bool nested = std::any_of(loop->list("body").begin(), loop->list("body").end(), [](const Node* b) {
      return py::any_node(b, [](const Node* n) { return n->is("For") || n->is("While"); });
    });
    if (nested) {
      say(why, "single pass: a loop inside the row loop");
      return std::nullopt;
    }
    uint32_t head = loop->begin.line - 1, first = loop->list("body").front()->begin.line - 1, last = loop->end.line - 1;
    uint32_t outer = loop->begin.col, inner = loop->list("body").front()->begin.col;
    if (first != head + 1 || inner <= outer || last >= lines.size()) {
      say(why, "single pass: the row loop's layout is not one header line over an indented body");
      return std::nullopt;
    }
    lines[head] = std::string(outer, ' ') + "r0_offset = 0";
    const std::string indent(inner - outer, ' ');
    for (uint32_t l = first; l <= last; ++l)
      if (lines[l].compare(0, indent.size(), indent) == 0) lines[l].erase(0, indent.size());
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  if (!source.empty() && source.back() != '\n') out.pop_back();
  return out;
}

// What each name holds: its version (bumped by every assignment that changes it), and for a name
// bound to a value another name already holds (a reused load, a recomputed expression) that
// name's canonical text, so that expressions over either compare equal.
struct Values {
  std::map<std::string, int> version;
  std::map<std::string, std::pair<int, std::string>> alias;  // name -> (its version then, canonical text)

  std::string ref(const std::string& id) const {
    auto v = version.find(id);
    int at = v == version.end() ? 0 : v->second;
    auto a = alias.find(id);
    if (a != alias.end() && a->second.first == at) return a->second.second;
    return fmt::format("{}#{}", id, at);
  }
};

// The text of `n` with every name read in it replaced by its canonical reference, so two
// expressions compare equal only if they compute the same thing from the same values.
std::string versioned(const std::string& src, const Node* n, const Values& values) {
  std::vector<Edit> edits;
  walk(n, [&](const Node* m) {
    if (m->is("Name"))
      edits.push_back({m->begin.offset - n->begin.offset, m->end.offset - n->begin.offset,
                       values.ref(std::string(m->ident("id")))});
  });
  return py::apply_edits(text_of(src, n), edits);
}

// A load's identity: pointer, mask and fill (positional or keyword); the eviction hint is not part of it.
std::string load_key(const std::string& src, const Node* call, const Values& values) {
  std::string key;
  for (const Node* a : call->list("args")) key += versioned(src, a, values) + ",";
  for (const Node* k : call->list("keywords"))
    if (k->ident("arg") != "eviction_policy") key += std::string(k->ident("arg")) + "=" +
                                                     versioned(src, k->child("value"), values) + ",";
  return key;
}

std::set<std::string> pointers_in(const Node* n) {
  std::set<std::string> out;
  walk(n, [&](const Node* m) {
    if (m->is("Name") && m->ident("id").find("ptr") != std::string_view::npos) out.insert(std::string(m->ident("id")));
  });
  return out;
}

struct Reloads {
  std::string source;
  int removed = 0;     // loads of what an earlier pass loaded
  int recomputed = 0;  // expressions an earlier pass computed from the same values
};

// Step 2: over the straight-line body, `tmpB = tl.load(P, M, other=F)` where an earlier
// `tmpA = tl.load(P, M, other=F)` read the same values (names at the same versions: the second
// pass re-assigns r0_index, r0_mask, r0_1 to the same expressions, which keeps their versions)
// and nothing was stored through P's pointer since becomes `tmpB = tmpA`. Then the second pass's
// arithmetic on tmpB is the first pass's on tmpA (Inductor recomputes a mask, a bias, a scale
// there): `tmpD = <expr>` where an earlier `tmpC = <expr>` computed the same expression from the
// same values becomes `tmpD = tmpC` — value numbering over names, so a row's elementwise chain is
// evaluated once, not once per pass. Identical expressions on identical values give identical
// values, so the kernel computes exactly what it did.
std::optional<Reloads> remove_reloads(const std::string& src, const Node* entry, std::string* why) {
  Values values;
  std::map<std::string, int>& version = values.version;
  std::map<std::string, std::string> rhs_of;  // name -> canonical text it was last given
  struct Loaded {
    std::string name;                // the name the load was assigned to
    int version = 0;                 // that name's version then (reusable while unchanged)
    const Node* call = nullptr;      // the load
    std::set<std::string> pointers;  // the pointers it reads through
  };
  std::map<std::string, Loaded> seen;  // by load key
  struct Computed {
    std::string name;
    int version = 0;
  };
  std::map<std::string, Computed> computed;  // by the canonical text of a pure expression
  std::vector<Edit> edits;
  int removed = 0, recomputed = 0;
  std::set<const Node*> kept;  // loads whose values a later pass now reuses
  // `rhs`: the canonical text of a pure expression; nullopt for a value not known to equal any
  // earlier one (a load, a call with effects, an augmented assignment).
  auto assign = [&](const Node* target, const std::optional<std::string>& rhs) {
    std::vector<const Node*> names = py::find_all(target, [](const Node* m) { return m->is("Name"); });
    for (const Node* m : names) {
      std::string id(m->ident("id"));
      // Re-assigned to what it already holds: the same value, the same version.
      if (rhs && names.size() == 1 && rhs_of.count(id) && rhs_of[id] == *rhs) continue;
      ++version[id];
      if (rhs && names.size() == 1) rhs_of[id] = *rhs;
      else rhs_of.erase(id);
    }
  };
  // `id` (just assigned) holds what `held` holds.
  auto same_as = [&](const std::string& id, const std::string& held) { values.alias[id] = {version[id], values.ref(held)}; };
  auto live = [&](const std::string& name, int at) { return version[name] == at; };
  // A store or atomic through a pointer, anywhere in `s`, invalidates what was loaded through it.
  auto writes = [&](const Node* s) {
    std::set<std::string> written;
    walk(s, [&](const Node* m) {
      if (!m->is("Call") || m->list("args").empty()) return;
      const Node* f = m->child("func");
      if (is_tl(f, "store") || (f && f->is("Attribute") && f->ident("attr").rfind("atomic_", 0) == 0))
        for (const std::string& p : pointers_in(m->list("args").front())) written.insert(p);
    });
    std::erase_if(seen, [&](const auto& entry) {
      for (const std::string& p : entry.second.pointers)
        if (written.count(p)) return true;
      return false;
    });
  };
  // Whether an expression reads memory or may have effects: its value is then not a function of its
  // text. Only calls into Triton's language, Inductor's helpers and libdevice (by their module
  // names), the `.to` conversion and float()/int() of a literal are known pure; any other
  // function's body is not ours to see.
  auto impure = [&](const Node* value) {
    return py::any_node(value, [](const Node* m) {
      if (!m->is("Call")) return false;
      const Node* f = m->child("func");
      if (f && f->is("Name") && (f->ident("id") == "float" || f->ident("id") == "int")) return false;  // float("-inf")
      if (!f || !f->is("Attribute")) return true;
      std::string_view a = f->ident("attr");
      const Node* root = f->child("value");
      while (root && root->is("Attribute")) root = root->child("value");
      bool module = root && root->is("Name") &&
                    (root->ident("id") == "tl" || root->ident("id") == "triton_helpers" ||
                     root->ident("id") == "libdevice" || root->ident("id") == "tl_math");
      bool effects = a == "load" || a == "store" || a.starts_with("atomic_") || a.starts_with("rand") ||
                     a == "inline_asm_elementwise" || a == "device_print" || a == "device_assert" ||
                     a == "debug_barrier" || a == "static_print";
      return effects || !(module || a == "to");
    });
  };
  // `tl.load(...)` or `tl.load(...).to(dtype)` (Inductor converts a narrow load where it is made):
  // the load call, and the conversion's text as part of the value's identity.
  auto load_of = [&](const Node* value, std::string* suffix) -> const Node* {
    if (is_tl_call(value, "load")) return value;
    const Node* f = value && value->is("Call") ? value->child("func") : nullptr;
    if (!f || !f->is("Attribute") || f->ident("attr") != "to" || !is_tl_call(f->child("value"), "load")) return nullptr;
    *suffix = ".to(";
    for (const Node* a : value->list("args")) *suffix += versioned(src, a, values) + ",";
    for (const Node* k : value->list("keywords"))
      *suffix += std::string(k->ident("arg")) + "=" + versioned(src, k->child("value"), values) + ",";
    return f->child("value");
  };
  for (const Node* s : entry->list("body")) {
    if (s->is("Assign") && s->list("targets").size() == 1) {
      const Node* target = s->list("targets").front();
      const Node* value = s->child("value");
      std::string suffix;
      if (const Node* load = target->is("Name") ? load_of(value, &suffix) : nullptr) {
        std::string key = load_key(src, load, values) + suffix;
        std::string id(target->ident("id"));
        auto it = seen.find(key);
        if (it != seen.end() && live(it->second.name, it->second.version)) {
          edits.push_back({value->begin.offset, value->end.offset, it->second.name});
          kept.insert(it->second.call);
          ++removed;
          assign(target, std::nullopt);
          same_as(id, it->second.name);
          continue;
        }
        assign(target, std::nullopt);
        seen[key] = {id, version[id], load,
                     pointers_in(load->list("args").empty() ? load : load->list("args").front())};
        continue;
      }
      writes(value);
      bool pure = !impure(value);
      if (!pure || !target->is("Name")) {
        assign(target, pure ? std::optional<std::string>(versioned(src, value, values)) : std::nullopt);
        continue;
      }
      std::string id(target->ident("id")), key = versioned(src, value, values);
      auto hit = computed.find(key);
      bool again = hit != computed.end() && hit->second.name != id && live(hit->second.name, hit->second.version);
      std::string held = again ? hit->second.name : std::string();
      assign(target, key);
      if (again) {
        // A literal or a plain name costs nothing to evaluate: only its value is recorded.
        if (!value->is("Constant") && !value->is("Name")) {
          edits.push_back({value->begin.offset, value->end.offset, held});
          ++recomputed;
        }
        same_as(id, held);
      } else {
        computed[key] = {id, version[id]};
        if (value->is("Name")) same_as(id, std::string(value->ident("id")));
      }
    } else if (s->is("AnnAssign") || s->is("AugAssign")) {
      if (const Node* v = s->child("value")) writes(v);
      assign(s->child("target"), std::nullopt);
    } else if (s->is("Expr")) {
      writes(s);  // a store, an atomic; any other call (an assert, a barrier) changes nothing we track
    } else {
      say(why, fmt::format("single pass: a {} statement in the kernel body", s->type));
      return std::nullopt;
    }
  }
  if (removed == 0) {
    say(why, "single pass: no pass re-loads what an earlier pass loaded");
    return std::nullopt;
  }
  // Inductor hinted evict_last on a first-pass load to keep the row in cache for the reload; the
  // row is now read once, so it need not stay.
  for (const Node* call : kept)
    for (const Node* k : call->list("keywords"))
      if (k->ident("arg") == "eviction_policy")
        edits.push_back({k->child("value")->begin.offset, k->child("value")->end.offset, "'evict_first'"});
  return Reloads{py::apply_edits(src, edits), removed, recomputed};
}

std::optional<int64_t> row_length(const Node* entry, const ir::Kernel* k, const std::vector<nlohmann::json>& launches) {
  for (const Node* s : entry->list("body"))
    if (s->is("Assign") && s->list("targets").size() == 1 && is_name(s->list("targets").front(), "r0_numel")) {
      const Node* v = s->child("value");
      if (v && v->is("Constant") && v->const_kind == py::ConstKind::Int) return std::stoll(v->value);
    }
  if (!k || launches.empty()) return std::nullopt;
  size_t index = 0, at = SIZE_MAX;
  for (const ir::KernelParam& p : k->signature) {
    if (p.is_constexpr) continue;
    if (p.name == "r0_numel") at = index;
    ++index;
  }
  int64_t most = 0;
  for (const nlohmann::json& l : launches) {
    if (at == SIZE_MAX || !l.contains("args") || l["args"].size() <= at || !l["args"][at].contains("value"))
      return std::nullopt;
    most = std::max(most, l["args"][at]["value"].get<int64_t>());
  }
  return most;
}

std::optional<SinglePass> rewrite(const std::string& source, const std::string& name, const ir::Kernel* k,
                                  const std::vector<nlohmann::json>& launches, std::string* why) {
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  auto loops = row_loops(ks->entry, why);
  if (!loops) return std::nullopt;
  std::optional<int64_t> n = row_length(ks->entry, k, launches);
  if (!n || *n <= 0) {
    say(why, "single pass: the row length is neither in the kernel nor in a recorded launch");
    return std::nullopt;
  }
  int64_t block = next_pow2(*n);
  if (block > kMaxSinglePassRow) {
    say(why, fmt::format("single pass: rows of {} elements do not fit one block", *n));
    return std::nullopt;
  }
  auto unrolled = unroll_loops(source, *loops, why);
  if (!unrolled) return std::nullopt;
  auto ks1 = parse(*unrolled, name, why);
  if (!ks1) return std::nullopt;
  FreshCombines fc = fresh_combines(*unrolled, ks1->entry);
  auto ks1b = parse(fc.source, name, why);
  if (!ks1b) return std::nullopt;
  SharedReduces sr = share_reduce_exps(fc.source, ks1b->entry, block == *n);
  auto ks2 = parse(sr.source, name, why);
  if (!ks2) return std::nullopt;
  auto reloads = remove_reloads(sr.source, ks2->entry, why);
  if (!reloads) return std::nullopt;
  // The block is the kernel's own: every R0_BLOCK read in the body becomes R0_ALL, defined first.
  auto ks3 = parse(reloads->source, name, why);
  if (!ks3) return std::nullopt;
  std::vector<Edit> edits;
  for (const Node* s : ks3->entry->list("body"))
    walk(s, [&](const Node* m) {
      if (is_name(m, "R0_BLOCK")) edits.push_back({m->begin.offset, m->end.offset, "R0_ALL"});
    });
  const Node* first = ks3->entry->list("body").front();
  edits.push_back({first->begin.offset, first->begin.offset,
                   fmt::format("R0_ALL: tl.constexpr = {}\n{}", block, std::string(first->begin.col, ' '))});
  std::string out = py::apply_edits(reloads->source, edits);
  auto ks4 = parse(out, name, why);
  if (!ks4) return std::nullopt;
  SinglePass sp{out, block, reloads->removed, reloads->recomputed, fc.replaced, sr.inlined, {}};
  LeanSoftmax lean = lean_softmax(out, ks4->entry);
  if (lean.folded > 0 && parse(lean.source, name, nullptr)) sp.lean_source = std::move(lean.source);
  return sp;
}

}  // namespace

std::optional<SinglePass> single_pass(const std::string& source, const std::string& name,
                                      const std::vector<nlohmann::json>& launches, std::string* why) {
  return rewrite(source, name, nullptr, launches, why);
}

namespace {

// Whether the kernel's loads along its rows run across the contiguous axis: every load whose index
// uses the reduced digit has it at a stride above 1 and an x digit at stride 1.
bool column_loads(const std::string& source, const std::string& name) {
  auto ks = parse(source, name, nullptr);
  if (!ks) return false;
  int columns = 0, others = 0;
  py::walk(ks->entry, [&](const py::Node* c) {
    if (!is_tl_call(c, "load") || c->list("args").empty()) return;
    const py::Node* ptr = c->list("args")[0];
    if (!ptr->is("BinOp") || ptr->ident("op") != "Add") return;
    auto a = ir::affine(ptr->child("right"));
    if (!a) return;
    bool r_strided = false, r_unit = false, x_unit = false;
    for (const auto& [n, v] : a->coef) {
      if (n.starts_with("r0_")) (std::llabs(v) == 1 ? r_unit : r_strided) = true;
      if (n.starts_with("x") && std::llabs(v) == 1) x_unit = true;
    }
    if (!r_strided && !r_unit) return;  // a per-row operand
    (r_strided && !r_unit && x_unit ? columns : others) += 1;
  });
  return columns > 0 && others == 0;
}

}  // namespace

std::vector<Candidate> single_pass_candidates(const KernelProfile& k, std::string* why) {
  if (k.kernel->kind != "reduction") {
    say(why, "single pass: not a looped reduction");
    return {};
  }
  auto sp = rewrite(k.kernel->source, k.kernel->name, k.kernel, k.launches, why);
  if (!sp) return {};
  // Rows per program and warps: from 1 to 64 elements per thread for each live tensor, at most
  // 8192 elements per program (registers), a few rows per program for short rows. One warp per row
  // too: a kernel heavy in per-element arithmetic (ALiBi bias, masks) ran best so on the H200, as
  // launch configs of its looped form (XBLOCK=1 num_warps=1).
  std::vector<std::pair<int64_t, int>> shapes;  // (rows a program, warps)
  for (int64_t x = 1; x <= 16 && x * sp->block <= kMaxSinglePassRow; x *= 2)
    for (int w : {1, 2, 4, 8, 16}) shapes.emplace_back(x, w);
  // Rows across the contiguous axis (a column reduction: `x0 + 476473*r0_1`): a program's loads are
  // coalesced only over 32 or more rows, which 8192 elements do not allow for rows of a few hundred;
  // up to 64K elements a program over 16-32 warps then (on the H200-class parts, 64 values a thread).
  // Where no tile of 32 fits (columns of 2049-4096 rows), 16 columns: a 32-byte sector of 2-byte values
  // (an RMS norm down 1.2M fp16 columns of 2153 had no single pass at all).
  if (column_loads(k.kernel->source, k.kernel->name)) {
    for (int64_t x : {32, 64})
      for (int w : {16, 32})
        if (x * sp->block <= kMaxColumnTile) shapes.emplace_back(x, w);
    if (32 * sp->block > kMaxColumnTile && 16 * sp->block <= kMaxColumnTile) shapes.emplace_back(16, 32);
  }
  // What every instance says before its launch config.
  std::string what = fmt::format(
      "single pass: each row read once ({} reload(s) removed{}{}{}, rows of {})", sp->reloads,
      sp->recomputed ? fmt::format(", {} recomputed expression(s) reused", sp->recomputed) : std::string(),
      sp->combines ? fmt::format(", {} softmax combine(s) on fresh accumulators folded", sp->combines) : std::string(),
      sp->shared_exps ? fmt::format(", {} softmax reduce(s) sharing their exps with the output", sp->shared_exps)
                      : std::string(),
      sp->block);
  std::vector<Candidate> out;
  for (auto [x, w] : shapes) {
    int64_t per_thread = x * sp->block / (32 * w);
    if (per_thread < 1 || per_thread > 64) continue;
    nlohmann::json cfg = {{"XBLOCK", x}, {"R0_BLOCK", sp->block}, {"num_warps", w}, {"num_stages", 1}};
    Candidate c;
    c.origin = "rewrite";
    c.description = what + ", " + ir::describe_config(cfg);
    try {
      c.source = ir::pin_config(sp->source, k.kernel->name, cfg);
    } catch (const std::exception& e) {
      say(why, std::string("single pass: ") + e.what());
      return {};
    }
    c.config = cfg;
    out.push_back(std::move(c));
  }
  // Fast exp: libdevice's accurate exp (Inductor's, where fast math is off) as tl.exp (ex2.approx,
  // what the templates use), for the instances of one or two rows per program over at most four
  // warps: per-element arithmetic is what bounds those (the fused ALiBi softmax's kernel 0.875 ->
  // 0.764 ms in the H200 suite run; the padded-mask softmax's best plain instance has two rows).
  // Lean: the same instances from the lean source (lean_softmax: about half the per-element
  // instructions of the fast-exp form in the ALiBi kernel's SASS, 30 -> 18). Neither is bit-equal:
  // G2 and G3 judge them by the tolerances, like any candidate.
  std::vector<Candidate> fast;
  for (const Candidate& c : out) {
    bool few_rows = c.config["XBLOCK"].get<int64_t>() <= 2 && c.config["num_warps"].get<int>() <= 4;
    if (!few_rows) continue;
    if (c.source.find("libdevice.exp(") != std::string::npos) {
      Candidate f = c;
      static const std::regex exp_call(R"(\blibdevice\.exp\()");
      f.source = std::regex_replace(c.source, exp_call, "tl.exp(");
      f.description = "fast exp (tl.exp for libdevice.exp), " + c.description;
      fast.push_back(std::move(f));
    }
    if (!sp->lean_source.empty()) {
      Candidate f = c;
      f.source = ir::pin_config(sp->lean_source, k.kernel->name, c.config);
      f.description = "lean softmax (the sum of its own exps, tl.max, exp2 with flush to zero, one reciprocal "
                      "per row), " + c.description;
      fast.push_back(std::move(f));
    }
  }
  out.insert(out.end(), std::make_move_iterator(fast.begin()), std::make_move_iterator(fast.end()));
  return out;
}

}  // namespace kopt::agents::rewrites
