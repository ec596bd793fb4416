// Inductor's static 1-D x index, as the rewrites that re-deal a kernel's x indices read it (x_order.h
// for reductions, transposed_tile.h for pointwise kernels):
//     xnumel = N
//     xoffset = tl.program_id(0) * XBLOCK
//     xindex = xoffset + tl.arange(0, XBLOCK)<suffix>
//     xmask = xindex < xnumel            (or tl.full([XBLOCK], True, tl.int1)<suffix>: unmasked)
// with program order free to change: no atomics, no second grid axis.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/coder/rewrites/source_edit.h"

namespace kopt::agents::rewrites::detail {

struct XIndex {
  int64_t numel = 0;                      // N, a constant in (1, 2^31)
  const py::Node* index_stmt = nullptr;   // the `xindex = ...` line
  const py::Node* mask_stmt = nullptr;    // the `xmask = ...` line
  bool mask_is_full = false;              // the unmasked form (`tl.full([XBLOCK], True, tl.int1)`)
  std::string suffix, mask_suffix;        // the index's and the unmasked mask's subscripts (`[:, None]`, `[:]`, "")
  std::vector<const py::Node*> others;    // every other statement of the entry, in order
};

// A digit variable of the x index: `name = <xindex restricted to [lo, hi)>` (lo, hi digit
// boundaries: `xindex % hi`, `(xindex // lo) % (hi/lo)`, `xindex // lo`, `xindex`; n is xnumel).
struct Digit {
  const py::Node* stmt;
  std::string name;
  int64_t lo, hi;
};
std::optional<Digit> digit_of(const std::string& text, const py::Node* stmt, int64_t n);

// The entry's x index, or nothing with the reason in `why` (prefixed by `what`: "x order: ...").
std::optional<XIndex> x_index(const std::string& source, const py::Node* entry, const std::string& what,
                              std::string* why);

// x_index, for Inductor's 1-D pointwise form only (`tl.arange(0, XBLOCK)` or `[:]`, no second axis).
std::optional<XIndex> x_index_1d(const std::string& source, const py::Node* entry, const std::string& what,
                                 std::string* why);

// A pointwise kernel's parse, its entry and the entry's text, for a rewrite that re-deals its x index;
// nothing, with the reason prefixed by `what`, for another kind or a kernel tiled already (YBLOCK).
struct UntiledPointwise {
  ir::KernelSource ks;
  const py::Node* entry = nullptr;
  std::string body;
};
std::optional<UntiledPointwise> untiled_pointwise(const ir::Kernel& k, const std::string& what, std::string* why);

// `text` with 4 spaces added to every line from byte `from` to the end of the entry (the first later
// line indented at or left of `def_col`): the statements after a new header (a loop, an `if`) become
// its body. Blank lines stay as they are.
std::string indent_from(const std::string& text, size_t from, size_t def_col);

// How many times `word` stands as a whole word in `text`.
size_t count_words(const std::string& text, const std::string& word);

}  // namespace kopt::agents::rewrites::detail
