#include "agents/coder/rewrites/row_tiles.h"

#include <algorithm>
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

// The names an expression reads.
std::set<std::string> names_in(const py::Node* e) {
  std::set<std::string> out;
  py::walk(e, [&](const py::Node* n) {
    if (n->is("Name")) out.insert(std::string(n->ident("id")));
  });
  return out;
}

}  // namespace

std::vector<Candidate> row_tiles(const KernelProfile& k, std::string* why) {
  auto no = [&](const std::string& reason) {
    say(why, "row tiles: " + reason);
    return std::vector<Candidate>{};
  };
  auto pw = untiled_pointwise(*k.kernel, "row tiles", why);
  if (!pw) return {};
  const std::string& source = k.kernel->source;
  const py::Node* entry = pw->entry;
  const std::string& body = pw->body;
  if (count_words(body, "num_programs") || count_words(body, "program_id") != 1)
    return no("the kernel reads its grid beyond the x offset");
  auto x = x_index_1d(source, entry, "row tiles", why);
  if (!x) return {};
  // Inductor's order: xnumel, the offset, the index and mask, then the rest.
  const auto& stmts = entry->list("body");
  if (stmts.size() < 3 || text_of(source, stmts[1]) != "xoffset = tl.program_id(0) * XBLOCK" ||
      stmts[2] != x->index_stmt || count_words(body, "xoffset") != 2)
    return no("the x offset is not the entry's second statement, used by the index alone");
  const int64_t n = x->numel;
  std::vector<Digit> digits;
  for (const py::Node* s : x->others)
    if (auto d = digit_of(text_of(source, s), s, n)) digits.push_back(*d);
  int64_t row = 0;
  for (const Digit& d : digits)
    if (d.lo > 1 && (row == 0 || d.lo < row)) row = d.lo;
  if (row == 0) return no("the x index has a single digit: no rows");
  if (n % row != 0) return no(fmt::format("rows of {} do not divide xnumel {}", row, n));
  for (const Digit& d : digits)
    if (d.lo >= row && d.lo % row != 0)
      return no(fmt::format("digit {} (stride {}) does not align with rows of {}", d.name, d.lo, row));
  std::set<std::string> per_row;  // the digits a tile holds one value of
  for (const Digit& d : digits)
    if (d.lo >= row) per_row.insert(d.name);
  // A load of a value per row, masked by xmask alone: the mask goes, so the load is one scalar and so is
  // everything computed from it (a vector mask would broadcast it back to a value per lane). The row is
  // valid in every tile the loop hands out.
  std::vector<Edit> edits;
  std::set<const py::Node*> scalar_loads;
  py::walk(entry, [&](const py::Node* c) {
    if (!is_tl_call(c, "load") || c->list("args").empty()) return;
    const py::Node* ptr = c->list("args")[0];  // `in_ptr1 + (x1)`: the index's names, not the pointer's
    std::set<std::string> used = names_in(ptr->is("BinOp") ? ptr->child("right") : ptr);
    bool uses_row = std::any_of(used.begin(), used.end(), [&](const std::string& u) { return per_row.count(u); });
    bool only_row = std::all_of(used.begin(), used.end(), [&](const std::string& u) { return per_row.count(u); });
    if (!uses_row || !only_row) return;
    const auto& args = c->list("args");
    const auto& kws = c->list("keywords");
    bool other = std::any_of(kws.begin(), kws.end(), [](const py::Node* kw) {
      return kw->ident("arg") == "other" || kw->ident("arg") == "mask";
    });
    if (args.size() == 2 && !other && (is_name(args[1], "xmask") ||
                                       (args[1]->is("Constant") && args[1]->const_kind == py::ConstKind::None))) {
      edits.push_back({args[1]->begin.offset, args[1]->end.offset, "None"});
      scalar_loads.insert(c);
    }
  });
  const int per_row_loads = static_cast<int>(scalar_loads.size());
  if (per_row_loads == 0)
    return no(fmt::format("no load reads a value per row of {} (nothing to compute once per tile)", row));

  const int64_t rows = n / row;
  std::string ind(stmts[1]->begin.col, ' ');
  std::string tiles = fmt::format("(({} + XBLOCK - 1) // XBLOCK)", row);
  edits.push_back({stmts[1]->begin.offset, stmts[1]->end.offset,
                   fmt::format("for xtile in tl.range(tl.program_id(0), {} * {}, tl.num_programs(0)):\n"
                               "{}xrow = xtile // {}\n"
                               "{}xinner = (xtile % {}) * XBLOCK + tl.arange(0, XBLOCK){}",
                               rows, tiles, ind, tiles, ind, tiles, x->suffix)});
  edits.push_back(
      {x->index_stmt->begin.offset, x->index_stmt->end.offset, fmt::format("xindex = xrow * {} + xinner", row)});
  edits.push_back({x->mask_stmt->begin.offset, x->mask_stmt->end.offset, fmt::format("xmask = xinner < {}", row)});
  for (const Digit& d : digits) {
    std::string v;
    if (d.lo >= row) {  // one value a tile
      v = d.lo == row ? "xrow" : fmt::format("(xrow // {})", d.lo / row);
      if (d.hi < n) v = fmt::format("({} % {})", v, d.hi / d.lo);
    } else if (d.lo == 1 && d.hi == row) {
      v = "xinner";
    } else {
      continue;  // below the row: computed from xindex as before
    }
    edits.push_back({d.stmt->begin.offset, d.stmt->end.offset, fmt::format("{} = {}", d.name, v)});
  }
  // An unmasked kernel's accesses now need the row mask: lanes past a row's end would touch the next row.
  if (x->mask_is_full) {
    bool unsupported = false;
    py::walk(entry, [&](const py::Node* c) {
      bool load = is_tl_call(c, "load"), store = is_tl_call(c, "store");
      if ((!load && !store) || scalar_loads.count(c)) return;
      const auto& args = c->list("args");
      size_t at = load ? 1 : 2;
      const py::Node* mask = access_mask(c);
      if (mask && mask->is("Constant") && mask->const_kind == py::ConstKind::None) {
        edits.push_back({mask->begin.offset, mask->end.offset, "xmask"});
      } else if (mask) {
        edits.push_back({mask->begin.offset, mask->begin.offset, "("});
        edits.push_back({mask->end.offset, mask->end.offset, ") & xmask"});
      } else if (args.size() == at && c->list("keywords").empty()) {
        edits.push_back({args.back()->end.offset, args.back()->end.offset, ", xmask"});
      } else {
        unsupported = true;
      }
    });
    if (unsupported) return no("an unmasked access with keywords but no mask");
  }
  std::string rewritten = py::apply_edits(source, edits);
  size_t header = rewritten.find("for xtile in tl.range(");
  size_t body_from = rewritten.find('\n', header) + 1;
  rewritten = indent_from(rewritten, body_from, entry->begin.col);

  std::vector<Candidate> out;
  struct Block {
    int64_t xblock;
    int warps;
  };
  for (Block b : {Block{1024, 4}, Block{512, 4}, Block{2048, 8}, Block{256, 2}}) {
    int64_t per_row = (row + b.xblock - 1) / b.xblock;
    if (per_row * b.xblock * 8 > row * 9) continue;  // more than 1/8 of the lanes past row ends
    if (rows * per_row >= (int64_t{1} << 31)) continue;
    nlohmann::json cfg = {{"XBLOCK", b.xblock}, {"num_warps", b.warps}, {"num_stages", 1}};
    Candidate c;
    c.origin = "rewrite";
    c.description = fmt::format("row tiles: programs walk tiles of one row of {} ({} per-row load(s) once a tile) @ {}",
                                row, per_row_loads, ir::describe_config(cfg));
    c.source = ir::pin_config(rewritten, k.kernel->name, cfg);
    c.config = cfg;
    c.own_config_space = true;  // any XBLOCK is valid: the loop covers every tile whatever the grid
    out.push_back(std::move(c));
    if (out.size() == 2) break;
  }
  if (out.empty())
    return no(fmt::format("rows of {} waste more than an eighth of every block of 256-2048 lanes", row));
  return out;
}

}  // namespace kopt::agents::rewrites
