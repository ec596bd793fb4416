// A straight-line pointwise kernel read for fusion: its x index's digits, its loads and its one
// store, each through `ptr + (index)`, and the elementwise statements between them — what a
// fusion strategy moves into the other kernel of the pair.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "artifact/index_map.h"
#include "agents/coder/fusion/pair.h"

namespace kopt::agents::fusion {

// The index maps' vocabulary (artifact/index_map.h, beside the IR: the profiler's floor reads the same
// index expressions), as the fusion strategies name it.
using ir::Affine;
using ir::affine;
using ir::complete;
using ir::Digit;
using ir::digit;
using ir::eval_int;
using ir::invert;
using ir::is_x_index;

struct Pointwise {
  ir::KernelSource ks;  // the parse the nodes below point into
  int64_t xnumel = 0;
  std::vector<Digit> digits;        // tiling [0, xnumel), sorted by base
  std::set<std::string> whole;      // names bound to an axis's whole index (`x2 = xindex`)
  // Each such name, and `xindex` (`yindex`, `zindex`) itself, as digits and their place values within it.
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> whole_terms;
  std::vector<const py::Node*> index_stmts;  // the digits' and whole names' definitions, in order
  struct Load {
    const py::Node* stmt;
    std::string target;
    Access at;
    std::string convert;  // `tl.load(...).to(tl.float32)`: the dtype the loaded value is converted to, else empty
  };
  std::vector<Load> loads;
  const py::Node* store_stmt = nullptr;
  Access store;
  std::vector<const py::Node*> body;  // every other computing statement, in order (elementwise)
  std::set<std::string> locals;       // names the kernel assigns (digits, loads, body)
};

// `k` read as such, or nothing with what did not fit: a loop or branch, a second grid axis, a
// statement that is not elementwise, a masked access beyond xmask, more than one store, digits that
// do not tile the x index.
// `source` is k's own or a candidate of k (the per-kernel search's winner). With `tile` false the
// digits need not tile the x index (`x4 = xindex // 256` beside `x1 = (xindex // 256) % 64`): for
// a strategy that evaluates the index maps instead of inverting them.
// With `tiled`, a kernel tiled over several program axes (YBLOCK, ZBLOCK beside XBLOCK: Inductor's transposing
// pointwise kernels) is read too, as one virtual x index `x + xnumel * (y + ynumel * z)`: each axis's digits
// (and a name bound to the axis's whole index) become digits of it, `xnumel` the product of the axes' numels, and
// masks may be any `&` of the axes' masks. The strategy must then use the digits only (no `xindex` of its own).
std::optional<Pointwise> read_pointwise(const ir::Kernel& k, const std::string& source, std::string* why,
                                        bool tile = true, bool tiled = false);

// The index `a` of an access as an affine map of the digits (`whole` names expanded into them).
std::optional<Affine> digit_affine(const Pointwise& p, const py::Node* index);

}  // namespace kopt::agents::fusion
