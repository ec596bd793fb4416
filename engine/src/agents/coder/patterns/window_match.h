// Recognizing a windowed-load (stencil) kernel from what it does: a pointwise kernel whose loads
// from one input differ only by constant offsets on top of one affine map of the decomposed output
// index, each masked by the bounds of its window coordinates (or by nothing but xmask where every
// window stays inside the input). Max and average pools of any rank, window, stride, padding,
// dilation and ceil_mode have this form, whatever aten op Inductor's comment names; so does any
// other stencil that combines such loads elementwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "artifact/index_map.h"

namespace kopt::agents::patterns {

// Python's floor division (toward minus infinity), as Inductor's `//` on window coordinates means it.
using ir::floordiv;  // artifact/index_map.h

// One mixed-radix digit of the output index: xindex // base % radix (the last digit has no radix
// in the kernel; `radix` is then what xnumel gives it). `coef` is its coefficient in the window
// loads' index; a window digit's coordinate in the input is stride * digit + a load's offset.
struct WindowDigit {
  int64_t base = 1, radix = 0, coef = 0;
  bool window = false;
  int64_t stride = 0;  // window digits: input positions per output step
  int64_t extent = 0;  // window digits: the input's length along the digit's dimension
};

// One of the window's loads: its value's name in the body, the constant of its index, and its
// offsets along each window digit (offset.size() == digits.size(); zero along other digits).
struct WindowLoad {
  std::string target;
  int64_t constant = 0;
  std::vector<int64_t> offset;
};

struct Window {
  std::string ptr;    // the input parameter every window load reads
  std::string other;  // the masked loads' `other` value as written ("" when unmasked)
  std::vector<WindowDigit> digits;  // innermost first; digits[0] is the input's contiguous dimension
  std::vector<WindowLoad> loads;    // in the body's order
  std::string xnumel_line;  // Inductor's `xnumel = N` (empty when xnumel is only an argument)
  std::vector<std::string> index_lines;  // the digit definitions (x0 = xindex % 101, ...), verbatim
  // Every other statement in order, verbatim except each window load, written `tmpN = win_<j>`
  // (the window value j the generated kernel computes), and each store, masked by `xmask`.
  std::vector<std::string> body;
  int64_t xnumel = 0;
  bool wide = false;  // indices need int64 (Inductor's xoffset is widened)
  // The innermost digit is no window digit but the input's contiguous one (a channels-last pool: the
  // channel); the window moves along digits 1, 2, ...
  bool channels_inner = false;
};

// The window kernel `k` computes, or nullopt with what did not match in *why.
std::optional<Window> match_window(const KernelProfile& k, std::string* why);

}  // namespace kopt::agents::patterns
