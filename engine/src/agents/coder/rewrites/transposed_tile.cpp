#include "agents/coder/rewrites/transposed_tile.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/x_index.h"
#include "artifact/pin_config.h"
#include "artifact/pyparse/edit.h"
#include "artifact/pyparse/visit.h"

namespace kopt::agents::rewrites {

using py::Edit;
using namespace detail;

namespace {

// Whether `name` appears in `expr` as a term of its own (not multiplied, divided or reduced):
// the access is then contiguous along that digit.
bool bare_term(const std::string& expr, const std::string& name) {
  std::regex w("\\b" + name + "\\b");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), w); it != std::sregex_iterator(); ++it) {
    size_t b = static_cast<size_t>(it->position()), e = b + name.size();
    while (b > 0 && expr[b - 1] == ' ') --b;
    while (e < expr.size() && expr[e] == ' ') ++e;
    bool before = b == 0 || expr[b - 1] == '(' || expr[b - 1] == '+';
    bool after = e == expr.size() || expr[e] == ')' || expr[e] == '+' || expr[e] == ',';
    if (before && after) return true;
  }
  return false;
}

}  // namespace

std::vector<Candidate> transposed_tile(const KernelProfile& k, std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, "transposed tile: " + reason);
    return std::vector<Candidate>{};
  };
  auto pw = untiled_pointwise(*k.kernel, "transposed tile", why);
  if (!pw) return {};
  const std::string& source = k.kernel->source;
  const py::Node* entry = pw->entry;
  const std::string& body = pw->body;
  auto x = x_index_1d(source, entry, "transposed tile", why);
  if (!x) return {};
  const int64_t n = x->numel;
  const py::Node *index_stmt = x->index_stmt, *mask_stmt = x->mask_stmt;
  const bool mask_is_full = x->mask_is_full;
  std::vector<Digit> digits;
  for (const py::Node* s : x->others)
    if (auto d = digit_of(text_of(source, s), s, n)) digits.push_back(*d);
  // Every use of xindex and XBLOCK must be one this rewrite replaces: the index and mask lines,
  // the digit variables (and XBLOCK's parameter and the program offset).
  if (count_words(body, "xindex") != 1 + (mask_is_full ? 0 : 1) + digits.size())
    return no("xindex is used other than through its digit variables");
  if (count_words(body, "XBLOCK") != 3 + (mask_is_full ? 1 : 0)) return no("XBLOCK shapes a value beyond the x index");
  std::set<int64_t> bounds = {1, n};
  for (const Digit& d : digits) bounds.insert({d.lo, std::min(d.hi, n)});
  std::vector<int64_t> b(bounds.begin(), bounds.end());
  for (size_t i = 1; i < b.size(); ++i)
    if (b[i] % b[i - 1] != 0) return no(fmt::format("its digits do not nest ({} does not divide {})", b[i - 1], b[i]));
  if (b.size() < 3) return no("the x index has a single digit");
  const int64_t na = b[1], nb = b[2] / b[1], rest = n / b[2];
  // Worth it only when an access runs along the second digit and strides over the first: a digit
  // variable spanning exactly [na, na*nb) as a bare term of a load's or store's pointer, and one
  // over the first digit in it otherwise (scaled). A per-channel vector read along the second digit
  // alone (a norm's weight) is broadcast over the first: the output order serves it.
  bool transposed = py::any_node(entry, [&](const py::Node* c) {
    if (!(is_tl_call(c, "load") || is_tl_call(c, "store")) || c->list("args").empty()) return false;
    std::string ptr = text_of(source, c->list("args").front());
    bool along_b = false, strided_a = false;
    for (const Digit& d : digits) {
      if (d.lo == na && d.hi == na * nb && bare_term(ptr, d.name)) along_b = true;
      if (d.lo == 1 && count_words(ptr, d.name) && !bare_term(ptr, d.name)) strided_a = true;
    }
    return along_b && strided_a;
  });
  if (!transposed)
    return no(fmt::format("no load or store runs along the digit of stride {} across the fastest one: the output "
                          "order serves every access", na));
  std::string ind(index_stmt->begin.col, ' ');
  std::vector<Candidate> out;
  struct Tile {
    int64_t ta, tb;
    int warps;
  };
  for (Tile t : {Tile{32, 32, 4}, Tile{64, 32, 4}, Tile{32, 64, 4}, Tile{64, 64, 8}, Tile{16, 64, 4}, Tile{64, 16, 4}}) {
    if (na % t.ta != 0 || nb % t.tb != 0) continue;
    const int64_t tiles_a = na / t.ta, tiles_b = nb / t.tb;
    // The digit variable over [lo, hi) in terms of the tile's a (fastest, along axis 1), b (axis
    // 0) and the program's remaining digits (one value per program).
    auto value = [&](const Digit& d) {
      std::vector<std::string> terms;
      auto term = [&](const std::string& piece, int64_t coef) {
        terms.push_back(coef == 1 ? piece : fmt::format("{} * {}", coef, piece));
      };
      if (d.lo == 1) term("xa", 1);
      if (d.lo <= na && d.hi >= na * nb) term("xb", na / d.lo);
      if (d.hi > na * nb) {
        int64_t lo = std::max(d.lo, na * nb), hi = std::min(d.hi, n);
        std::string piece = lo == na * nb ? "xrest" : fmt::format("(xrest // {})", lo / (na * nb));
        if (hi < n) piece = fmt::format("({} % {})", piece, hi / lo);
        term(piece, lo / d.lo);
      }
      std::string v = "xzero";
      for (const std::string& s : terms) v += " + " + s;
      return v;
    };
    std::vector<Edit> edits;
    std::string head = fmt::format("xtile = tl.program_id(0)\n"
                                   "{0}xa = (xtile % {1}) * {2} + tl.arange(0, {2})[None, :]\n"
                                   "{0}xb = ((xtile // {1}) % {3}) * {4} + tl.arange(0, {4})[:, None]\n"
                                   "{0}xrest = xtile // {5}\n"
                                   "{0}xzero = tl.zeros([{4}, {2}], tl.int32)\n"
                                   "{0}xindex = xzero + xa + {6} * xb",
                                   ind, tiles_a, t.ta, tiles_b, t.tb, tiles_a * tiles_b, na);
    if (rest > 1) head += fmt::format(" + {} * xrest", na * nb);
    edits.push_back({index_stmt->begin.offset, index_stmt->end.offset, head});
    edits.push_back({mask_stmt->begin.offset, mask_stmt->end.offset,
                     mask_is_full ? fmt::format("xmask = tl.full([{}, {}], True, tl.int1)", t.tb, t.ta)
                                  : std::string("xmask = xindex < xnumel")});
    for (const Digit& d : digits)
      edits.push_back({d.stmt->begin.offset, d.stmt->end.offset, fmt::format("{} = {}", d.name, value(d))});
    nlohmann::json cfg = {{"XBLOCK", t.ta * t.tb}, {"num_warps", t.warps}, {"num_stages", 1}};
    Candidate c;
    c.origin = "rewrite";
    c.description = fmt::format("transposed tile: {} of the digit of stride 1 by {} of the digit of stride {} per "
                                "program @ {}", t.ta, t.tb, na, ir::describe_config(cfg));
    c.source = ir::pin_config(py::apply_edits(source, edits), k.kernel->name, cfg);
    c.config = cfg;  // not the kernel's config space: XBLOCK is the tile's size (own_config_space stays false)
    out.push_back(std::move(c));
  }
  if (out.empty()) return no(fmt::format("no tile of 16-64 by 16-64 divides the digits ({} by {})", na, nb));
  return out;
}

}  // namespace kopt::agents::rewrites
