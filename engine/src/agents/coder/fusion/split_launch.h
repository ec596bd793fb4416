// What the two segment splits (split.h for reductions, scan_segments.h for scans) share: reading the
// launch they replace (its pointer arguments, the device's SM count, a free scratch name) and writing
// each new kernel (the original's source with its def renamed and re-declared, the config pinned).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/coder/fusion/declaration.h"
#include "agents/coder/templates/body.h"
#include "artifact/ir.h"
#include "stitch/region.h"

namespace kopt::agents::fusion {

struct SplitLaunch {
  const ir::Launch* launch = nullptr;
  const ir::Kernel* kernel = nullptr;
  std::vector<std::string> constexprs;        // the signature's constexpr names, in order
  std::vector<std::string> sizes;             // its trailing runtime parameters after the pointers (xnumel, ...)
  std::vector<std::string> ptr_args;          // the launch's pointer arguments, in order
  std::vector<DeclParam> params;              // the pointers as the new kernels declare them
  int64_t sms = 132;                          // the kernel's DeviceProperties' SM count
  std::string scratch;                        // a name the module does not use yet (buf_segN)
  std::string alloc;                          // the module's allocation function (empty_strided_cuda)
};

// The logical lines of a kernel's entry body (templates::logical_lines), or nothing with the reason.
std::optional<std::vector<templates::LogicalLine>> entry_body(const ir::Kernel& k, std::string* why);

// `l` as a line of source again, indented as it was.
std::string indented(const templates::LogicalLine& l);

// Whether `lines` set `mask` all true (`xmask = tl.full(...)`): Inductor writes it so where every config it
// had divides the extent, so the split's tiles must divide it too.
bool all_true(const std::vector<templates::LogicalLine>& lines, const std::string& mask);

// How a loop's loads and stores walk the reduced (or scanned) index: along memory (`r0_1 + 50304*x0`: a row
// a program, long blocks of it), across it (`x0 + 512*r0_1`: adjacent rows adjacent in memory: tiles of
// several rows, each access coalesced across them), or both (a row read along memory and written across it,
// a softmax into a transposed output: tiles of rows and blocks both long enough for either access; a row a
// program wrote 2 of every 32 bytes it stored, 3.4x slower than Inductor's kernel).
enum class Walk { along, across, both };
Walk walk(const std::vector<templates::LogicalLine>& loop);

// Launch `li` of `f` read for a split: a kernel of `kind` (a looped "reduction" for the splits, "pointwise" for
// the column loop) that writes no argument in place, whose runtime parameters are pointers followed by the size
// parameters whose names `sizes` lists. Nothing, with the reason, otherwise.
std::optional<SplitLaunch> read_split_launch(const ir::Artifact& a, const ir::Function& f, size_t li,
                                             const std::vector<std::string>& sizes, std::string* why,
                                             const std::string& kind = "reduction");

// A new launch of the split: kernel `<original>` + `suffix` from `body` (the def line's body, in the
// original's form), declared with `params`, `mutated` and `config` pinned, launched with `args`. Nothing,
// with the reason, when it cannot be declared or does not parse.
std::optional<stitch::NewLaunch> split_kernel(const SplitLaunch& s, const std::string& suffix, const std::string& body,
                                              const std::vector<DeclParam>& params,
                                              const std::vector<std::string>& mutated, const nlohmann::json& config,
                                              const std::string& args, std::string* why);

}  // namespace kopt::agents::fusion
