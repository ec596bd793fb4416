#include "agents/coder/rewrites/softmax_folds.h"

#include <map>
#include <regex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

using py::Node;
using py::Edit;
using py::walk;
using namespace detail;

// Step 1b: in the straight-line body each row's online softmax combine runs once, on the fresh
// accumulators (max -inf, sum 0), where `online_softmax_combine(-inf, 0, v)` is exactly
// (v, where(v == -inf, 1, exp(v - v))) — its two exps per element (one for each side's scale)
// only ever give 0 or 1 there, and v - v + 1 is 1 or NaN as exp(v - v) is. Without them the
// single pass keeps one exp per element in the reduce and one in the output, and a kernel heavy in
// per-element arithmetic (ALiBi, masks) stops being bound by its exps.
FreshCombines fresh_combines(const std::string& src, const Node* entry) {
  std::map<std::string, std::string> last;  // name -> text of the value it was last assigned at top level
  std::vector<Edit> edits;
  for (const Node* s : entry->list("body")) {
    if (s->is("AugAssign") || s->is("AnnAssign"))  // a name changed in place: no longer its initial value
      walk(s->child("target"), [&](const Node* m) {
        if (m->is("Name")) last.erase(std::string(m->ident("id")));
      });
    if (!s->is("Assign") || s->list("targets").size() != 1) continue;
    const Node* target = s->list("targets").front();
    const Node* value = s->child("value");
    const Node* f = value && value->is("Call") ? value->child("func") : nullptr;
    bool combine = f && f->is("Attribute") && f->ident("attr") == "online_softmax_combine" &&
                   is_name(f->child("value"), "triton_helpers");
    if (combine && target->is("Tuple") && target->list("elts").size() == 2 && value->list("args").size() == 4) {
      const auto& a = value->list("args");
      const auto& t = target->list("elts");
      auto init = [&](const Node* n) { return n->is("Name") ? last[std::string(n->ident("id"))] : std::string(); };
      std::string m0 = init(a[0]), s0 = init(a[1]);
      bool fresh = m0.starts_with("tl.full(") &&
                   (m0.find("float('-inf')") != std::string::npos || m0.find("float(\"-inf\")") != std::string::npos) &&
                   s0.starts_with("tl.zeros(");
      if (fresh && a[2]->is("Name") && t[0]->is("Name") && t[1]->is("Name")) {
        std::string v(a[2]->ident("id"));
        std::string indent(s->begin.col, ' ');
        edits.push_back({s->begin.offset, s->end.offset,
                         fmt::format("{} = {}\n{}{} = tl.where({} == float('-inf'), 1.0, ({} - {}) + 1.0)",
                                     t[0]->ident("id"), v, indent, t[1]->ident("id"), v, v, v)});
      }
    }
    walk(target, [&](const Node* m) {
      if (m->is("Name")) last[std::string(m->ident("id"))] = target->is("Name") ? text_of(src, value) : std::string();
    });
  }
  return {py::apply_edits(src, edits), static_cast<int>(edits.size())};
}

// Step 1c: an online softmax reduce whose row the output pass exponentiates again. The helper
// `M, S = online_softmax_reduce(A, B, 1, fast)` computes exp(where(M == -inf, 0, A - M)) inside,
// and the second pass computes exp(V - M) on the same row V; written out as
//   M = max2(A, 1); m = M[:, None]; d = V - m; e = exp(d)
//   S = sum(B * where(m == -inf, 1.0, e), 1)
// it is the helper's own arithmetic (exp(0) is exactly 1, and A equals V lane by lane when the
// accumulator's mask is all-true: a row that fills its block), and value numbering (step 2) then
// reuses d and e for the output pass's identical expressions: one exp per element, not two.
SharedReduces share_reduce_exps(const std::string& src, const Node* entry, bool row_fills_block) {
  std::map<std::string, const Node*> value_of;  // name -> the value of its only top-level assignment
  std::map<std::string, int> assignments;
  for (const Node* s : entry->list("body")) {
    const Node* t = s->is("Assign") && s->list("targets").size() == 1 ? s->list("targets").front()
                    : s->is("AugAssign") || s->is("AnnAssign") ? s->child("target") : nullptr;
    walk(t, [&](const Node* m) {
      if (m->is("Name")) ++assignments[std::string(m->ident("id"))];
    });
    if (t && t->is("Name") && s->is("Assign")) value_of[std::string(t->ident("id"))] = s->child("value");
  }
  auto once = [&](const std::string& id) { return assignments[id] == 1 && value_of.count(id); };
  // Masks known all-true: r0_mask when the row fills the block, Inductor's all-true xmask.
  auto all_true = [&](const Node* m, auto&& self) -> bool {
    if (m->is("BinOp") && m->ident("op") == "BitAnd") return self(m->child("left"), self) && self(m->child("right"), self);
    if (!m->is("Name")) return false;
    std::string id(m->ident("id"));
    if (id == "r0_mask") return row_fills_block;
    return id == "xmask" && once(id) && text_of(src, value_of[id]) == "tl.full([XBLOCK], True, tl.int1)[:, None]";
  };
  std::vector<Edit> edits;
  int index = 0;
  for (const Node* s : entry->list("body")) {
    if (!s->is("Assign") || s->list("targets").size() != 1) continue;
    const Node* target = s->list("targets").front();
    const Node* value = s->child("value");
    const Node* f = value->is("Call") ? value->child("func") : nullptr;
    if (!f || !f->is("Attribute") || f->ident("attr") != "online_softmax_reduce" || !is_name(f->child("value"), "triton_helpers"))
      continue;
    const auto& a = value->list("args");
    if (!target->is("Tuple") || target->list("elts").size() != 2 || a.size() != 4 || !a[0]->is("Name") ||
        !a[1]->is("Name") || !a[2]->is("Constant") || a[2]->value != "1" || !a[3]->is("Constant") ||
        (a[3]->const_kind != py::ConstKind::True && a[3]->const_kind != py::ConstKind::False))
      continue;
    const Node* tm = target->list("elts")[0];
    const Node* ts = target->list("elts")[1];
    if (!tm->is("Name") || !ts->is("Name")) continue;
    // A = where(all-true mask, X, A's initial value): its lanes are X's; X through plain names
    // and broadcasts to V, the row's own value.
    std::string acc(a[0]->ident("id"));
    if (assignments[acc] != 2) continue;  // its initial value, then the one update of the single pass
    const Node* upd = nullptr;
    for (const Node* t : entry->list("body"))
      if (t->begin.offset < s->begin.offset && t->is("Assign") && t->list("targets").size() == 1 &&
          is_name(t->list("targets").front(), acc))
        upd = t->child("value");
    if (!is_tl_call(upd, "where") || upd->list("args").size() != 3 || !all_true(upd->list("args")[0], all_true) ||
        !is_name(upd->list("args")[2], acc) || !upd->list("args")[1]->is("Name"))
      continue;
    std::string v(upd->list("args")[1]->ident("id"));
    for (int hops = 0; hops < 8 && once(v); ++hops) {
      const Node* x = value_of[v];
      if (x->is("Name")) v = std::string(x->ident("id"));
      else if (is_tl_call(x, "broadcast_to") && !x->list("args").empty() && x->list("args")[0]->is("Name"))
        v = std::string(x->list("args")[0]->ident("id"));
      else break;
    }
    if (!once(v)) continue;
    // The helper's own exp: tl_math.exp under fast math, else libdevice's.
    std::string exp = a[3]->const_kind == py::ConstKind::True ? "tl_math.exp" : "libdevice.exp";
    std::string ind(s->begin.col, ' ');
    std::string m = fmt::format("_kopt_m{}", index), d = fmt::format("_kopt_d{}", index),
                e = fmt::format("_kopt_e{}", index);
    edits.push_back({s->begin.offset, s->end.offset,
                     fmt::format("{M} = triton_helpers.max2({A}, 1)\n{i}{m} = {M}[:, None]\n{i}{d} = {V} - {m}\n"
                                 "{i}{e} = {exp}({d})\n{i}{S} = tl.sum({B} * tl.where({m} == float('-inf'), 1.0, {e}), 1)",
                                 fmt::arg("M", tm->ident("id")), fmt::arg("A", acc), fmt::arg("i", ind), fmt::arg("m", m),
                                 fmt::arg("d", d), fmt::arg("V", v), fmt::arg("e", e), fmt::arg("exp", exp),
                                 fmt::arg("S", ts->ident("id")), fmt::arg("B", a[1]->ident("id")))});
    ++index;
  }
  return {py::apply_edits(src, edits), index};
}

// Step 1d (the lean variants): a shared reduce's sum S, written by step 1c as
// sum(B * where(m == -inf, 1.0, e)), is Σ e bit for bit wherever the row's max is finite (B is 1
// there: the folded combine gives 1 for finite and -inf values, and a NaN value makes the max
// NaN). Where the max is not finite every exp is NaN (exp(-inf - -inf), exp(x - NaN)), so each
// `e / S` is NaN whichever S: the outputs are the same when S is used only so. With S = Σ e, a NaN
// value makes its exp, S and every output NaN, so the max may skip NaNs too (tl.max: one min/max
// instruction instead of a compare, a NaN test and a select) when it feeds only the exps. Per
// element that also leaves one exp as ex2.approx.ftz (tl.math.exp2; tl.exp's non-ftz ex2 adds a
// range test and two scalings) and a multiply by the row's reciprocal for div.full's scalings.
LeanSoftmax lean_softmax(const std::string& src, const Node* entry) {
  static const std::regex sum_re(R"(^tl\.sum\((\w+) \* tl\.where\((_kopt_m(\d+)) == float\('-inf'\), 1\.0, (_kopt_e\d+)\), 1\)$)");
  static const std::regex exp_re(R"(^(tl\.exp|tl_math\.exp|libdevice\.exp)\((_kopt_d\d+)\)$)");
  static const std::regex max_re(R"(^triton_helpers\.max2\((\w+), 1\)$)");
  const auto& body = entry->list("body");
  auto target_of = [](const Node* s) -> std::string {
    return s->is("Assign") && s->list("targets").size() == 1 && s->list("targets")[0]->is("Name")
               ? std::string(s->list("targets")[0]->ident("id"))
               : std::string();
  };
  std::vector<Edit> edits;
  int folded = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    std::string sname = target_of(body[i]);
    std::smatch sm;
    std::string sv = sname.empty() ? std::string() : text_of(src, body[i]->child("value"));
    if (!std::regex_match(sv, sm, sum_re)) continue;
    std::string m = sm[2], e = sm[4], d = "_kopt_d" + sm[3].str();
    // Step 1c's lines before S: M = max2(A, 1); m = M[:, None]; d = V - m; e = exp(d).
    const Node *mline = nullptr, *eline = nullptr, *maxline = nullptr;
    for (size_t j = 0; j < i; ++j) {
      std::string t = target_of(body[j]);
      if (t == m) mline = body[j];
      if (t == e) eline = body[j];
    }
    if (!mline || !eline) continue;
    std::string mv = text_of(src, mline->child("value"));
    if (!mv.ends_with("[:, None]")) continue;
    std::string big_m = mv.substr(0, mv.size() - 9);
    for (size_t j = 0; j < i; ++j)
      if (target_of(body[j]) == big_m && std::regex_match(text_of(src, body[j]->child("value")), max_re)) maxline = body[j];
    std::smatch em;
    std::string ev = text_of(src, eline->child("value"));
    if (!std::regex_match(ev, em, exp_re) || em[2].str() != d) continue;
    // After S: each name holding S (or S[:, None]) only divides a name holding e; names holding M or
    // m only copied (else the max stays NaN-propagating).
    std::set<std::string> sums{sname}, exps{e}, maxes{m, big_m};
    std::vector<Edit> divs;
    bool sums_ok = true, max_ok = maxline != nullptr;
    for (size_t j = i + 1; j < body.size() && sums_ok; ++j) {
      const Node* s = body[j];
      std::string t = target_of(s);
      const Node* v = s->is("Assign") ? s->child("value") : s;
      auto base_name = [&](const Node* x) -> std::string {  // X or X[:, None]
        if (x->is("Name")) return std::string(x->ident("id"));
        if (x->is("Subscript") && text_of(src, x).ends_with("[:, None]") && x->child("value")->is("Name"))
          return std::string(x->child("value")->ident("id"));
        return {};
      };
      std::string alias = t.empty() ? std::string() : base_name(v);
      if (!alias.empty() && (sums.count(alias) || exps.count(alias) || maxes.count(alias))) {
        for (auto* set : {&sums, &exps, &maxes}) {
          if (set->count(alias)) set->insert(t);
          else set->erase(t);
        }
        continue;
      }
      py::visit(v, [&](const Node* n, const Node* parent) {
        if (!sums_ok) return py::Step::Prune;
        if (n->is("Name")) {
          std::string id(n->ident("id"));
          if (maxes.count(id)) max_ok = false;
          if (sums.count(id)) {
            bool div = parent && parent->is("BinOp") && parent->ident("op") == "Div" && parent->child("right") == n &&
                       parent->child("left")->is("Name") && exps.count(std::string(parent->child("left")->ident("id")));
            if (!div) sums_ok = false;
            else divs.push_back({parent->begin.offset, parent->end.offset,
                                 fmt::format("({} * (1.0 / {}))", parent->child("left")->ident("id"), id)});
          }
        }
        return py::Step::Descend;
      });
      for (auto* set : {&sums, &exps, &maxes}) set->erase(t);  // reassigned to something else
    }
    if (!sums_ok || divs.empty()) continue;
    const Node* svalue = body[i]->child("value");
    edits.push_back({svalue->begin.offset, svalue->end.offset, fmt::format("tl.sum({}, 1)", e)});
    const Node* evalue = eline->child("value");
    edits.push_back({evalue->begin.offset, evalue->end.offset, fmt::format("tl.math.exp2({} * 1.4426950408889634)", d)});
    if (max_ok) {
      const Node* xv = maxline->child("value");
      std::smatch xm;
      std::string xt = text_of(src, xv);
      std::regex_match(xt, xm, max_re);
      edits.push_back({xv->begin.offset, xv->end.offset, fmt::format("tl.max({}, 1)", xm[1].str())});
    }
    edits.insert(edits.end(), divs.begin(), divs.end());
    ++folded;
  }
  return {py::apply_edits(src, edits), folded};
}

}  // namespace kopt::agents::rewrites
