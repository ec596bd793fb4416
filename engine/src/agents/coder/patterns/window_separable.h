// The separable form of a windowed reduction: where a window kernel (window_match.h) combines every
// window value with one associative operation (max, min or sum: max and average pools, whatever their
// stride, padding or dilation) and the window is a product of per-digit offsets, a program walking
// output rows combines each input row's taps once (its "row value"), keeps the row values later
// output rows need in a ring carried through a loop, and combines the rows of each output from the
// ring. Per output that is `stride` new rows of kw taps and kh * kd row values, instead of every
// window element (and, under dilation, no row shared between consecutive outputs to carry).
// For a 5x5 pool with dilation 2: 5 loads and 8 combines an output instead of 25 and 24.
// Max and min are exact in any order (the values are those Inductor combines, NaN kept by the same
// helper); a sum is reassociated (rows first), within G2's tolerance like any reduction reordered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "agents/coder/patterns/window_match.h"

namespace kopt::agents::patterns {

// How the window's body combines its values, read from the statements match_window kept.
struct Combine {
  std::string op;      // "max", "min" or "sum"
  std::string root;    // the name the whole window's combined value has in the body
  std::string to;      // the conversion each value takes before combining (".to(tl.float32)" or "")
  std::vector<std::string> body;  // the body without the window values' statements and the combine
                                  // tree; `root = win_sep` where the tree's last combine was
};

// The combine `w` computes, or nullopt with why in *why (a value used twice, as by an argmax; two
// operations; a value that is not the window's element on every stored output).
std::optional<Combine> read_combine(const Window& w, std::string* why);

// Instances of the separable form for `k` (already matched as `w`), or none with the reason.
std::vector<Candidate> separable(const KernelProfile& k, const Window& w, std::string* why_not);

}  // namespace kopt::agents::patterns
