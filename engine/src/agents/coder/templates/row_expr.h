// Reads an Inductor row-reduction kernel (one row per x index, reduced over r0)
// into what it computes: for every store, the stored value as an expression tree
// over the kernel's loads, constants, elementwise ops and row reductions (sum,
// Welford mean / M2). The schedule (persistent vs looped, block sizes, masks,
// accumulators carried through the loop) is read away; the arithmetic is kept
// op for op, so a template that emits these trees computes what the original
// computes. Anything the reader does not understand (non-affine indexing, an
// unknown call, a max reduction, control flow) is refused with the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::agents::templates {

// Shape bits of a value inside one program: kRow varies with the row (x), kCol with
// the column (r0); a tile has both, a scalar neither.
constexpr int kRow = 1, kCol = 2, kTile = 3;

// address = ptr + c + r * r0 + x * x0 (the kernel's own affine indexing).
struct RowAccess {
  std::string ptr;
  int64_t r = 0, x = 0, c = 0;
  int shape() const { return (r ? kCol : 0) | (x ? kRow : 0); }
};

struct RowExpr;
using RowExprP = std::shared_ptr<const RowExpr>;

struct RowExpr {
  // load | const | zero (an accumulator's initial value) | add sub mul div neg | call (unary or
  // binary elementwise function `text`) | to (`text` = dtype) | sum | wmean | wm2 | wcount
  // (Welford over the row) | wr_mean wr_m2 wr_weight (a Welford accumulator, before its final combine)
  std::string op;
  std::vector<RowExprP> args;
  std::string text;    // const: source text; call: function; to: dtype
  RowAccess at;        // load
  std::string evict;   // load: the eviction policy the original asked for
  int shape = 0;
  std::string key;     // structural identity (equal keys compute equal values)
};

struct RowStore {
  RowAccess at;
  RowExprP value;
};

struct RowKernel {
  std::vector<RowStore> stores;
  std::vector<std::string> body_consts;  // "xnumel = 128" lines the original fixes in its body
};

// nullopt (reason in *why) when the kernel is not a row kernel the reader can prove.
std::optional<RowKernel> read_row_kernel(const ir::Kernel& k, std::string* why);

}  // namespace kopt::agents::templates
