// Index expressions of pointwise kernels as integer affine maps, for fusing two kernels across the
// buffer between them: the digits of a kernel's x index (Inductor's `x0 = xindex % 1024`,
// `x1 = xindex // 1024`), an index expression as an affine map of named integers, and the inverse
// of a load index that walks a whole buffer once (a flip, a transpose, any permutation of axes with
// some of them reversed): the digits as expressions of an address. Beside the IR because the
// profiler reads the same expressions (the part of a buffer a kernel's accesses touch, its floor).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/pyparse/ast.h"

namespace kopt::ir {

// c + sum coef[name] * name.
struct Affine {
  std::map<std::string, int64_t> coef;
  int64_t c = 0;
};

// a + factor * b, no zero coefficient kept.
Affine plus(Affine a, const Affine& b, int64_t factor = 1);

// The affine map an integer expression computes from names, integer constants, +, -, * by a
// constant, unary minus and parentheses; nothing for anything else (a division, a call, a float).
std::optional<Affine> affine(const py::Node* e);

// The same with each name of `bound` standing for its map (an address written over other names), and `//` and
// `%` by a positive constant p where the dividend's terms whose coefficient p does not divide, with its constant,
// stay within one multiple of p over `range` (name -> n: the name is in [0, n)): v = p * high + low with low in
// [0, p), exactly for every value the names take in range. Nothing where a term p does not divide has a name
// without a range, or the low part spans past p.
std::optional<Affine> affine(const py::Node* e, const std::map<std::string, Affine>& bound,
                             const std::map<std::string, int64_t>& range);

// Python's floored division of integers (b != 0).
inline int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// One digit of the x index: name = xindex // base % radix, or name = xindex // base for the
// outermost (radix 0 as written; what xnumel leaves it once the kernel is read whole).
struct Digit {
  std::string name;
  int64_t base = 1, radix = 0;
};

// The digit an assignment's value defines, when it is `xindex % R`, `xindex // B` or
// `(xindex // B) % R` (radix 0 when not given).
std::optional<Digit> digit(const std::string& name, const py::Node* value);
// The same over another axis's index (`yindex`, `zindex` of a tiled kernel).
std::optional<Digit> digit(const std::string& name, const py::Node* value, std::string_view index);

// The digit an assignment `name = value` makes of one of a kernel's tiled indices (`xindex`, `yindex`,
// `zindex`, `r0_index`), with that index's name: `x0 = xindex` (base 1, radix 0) or as digit() reads it.
struct AxisDigit {
  std::string index;
  Digit digit;
};
std::optional<AxisDigit> axis_digit(const std::string& name, const py::Node* value);

// Fills each digit's missing radix from xnumel and checks that the digits tile [0, xnumel) exactly:
// bases 1, r0, r0*r1, ... with the radices multiplying to xnumel. Sorted by base on return.
bool complete(std::vector<Digit>& digits, int64_t xnumel, std::string* why);

// Whether `a` is the x index itself written through its digits: sum base_k * digit_k, no constant.
bool is_x_index(const Affine& a, const std::vector<Digit>& digits);

// For a load index `load` (affine in `digits`, which tile [0, numel)) that reads every element of
// [0, numel) once — each digit's coefficient is a mixed-radix place value, some negated (a
// reversed axis) with the constant bringing it back into range — the expression of each digit
// (in `digits`' order) as a function of the address named `addr`. Nothing, with the reason, when
// the map is not such a bijection. `layout`, the buffer's (size, stride) per dimension when known:
// a buffer whose rows Inductor padded (sizes (13159, 61424), strides (61440, 1)) is read once
// per element when the load's places and the digits' radices are the buffer's strides and sizes
// (some axes reversed); its addresses then skip the padding, and a digit comes back from an
// address by the next place up, `(a % 61440)`, rather than by its radix.
std::optional<std::vector<std::string>> invert(const Affine& load, const std::vector<Digit>& digits, int64_t numel,
                                               const std::string& addr, std::string* why,
                                               const std::vector<std::pair<int64_t, int64_t>>& layout = {});

// The value an integer expression takes with `env`'s names bound: constants, names, +, -, *, //
// and % with Python's floored division, unary minus, parentheses. Nothing for anything else (a
// call, a float, an unbound name) or a division by zero. What a strategy samples an index map
// with where it has no closed form for it (fusion/row_merge.h).
std::optional<int64_t> eval_int(const py::Node* e, const std::map<std::string, int64_t>& env);

}  // namespace kopt::ir
