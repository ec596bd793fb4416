// Host-code edits for a region: new launches in place of launches of call() — one fused kernel in
// place of several, or several launches in place of one (a split: a statistics pass writing per-segment
// partials into a scratch allocation, then the pass that uses them) — and the internal buffers no
// longer needed gone. Every other byte of the module stays; G1 (verify/region_host.h) holds a
// candidate module to exactly these edits.
//
// The edits, on the entry function:
//   - the new kernels' declarations (`NAME = async_compile.triton('NAME', '''...''', ...)`, shaped
//     like the first replaced kernel's) go in after the last replaced kernel's declaration;
//   - the first replaced launch's statement becomes the scratch allocations, then
//     `BEFORE.run(ARGS, stream=S)` for each kernel launched before the last, then
//     `NAME.run(ARGS, stream=S)` (its own stream), then `del` of the scratch buffers;
//   - the other fused launches' statements are deleted;
//   - the allocations and `del`s of the internal buffers are deleted (a `del` of several names
//     keeps the others);
//   - an allocation between the first and the last fused launch of a buffer the fused launch
//     passes moves to just before it (the fused launch runs where the first launch ran).
#pragma once

#include <string>
#include <vector>

#include "artifact/ir.h"
#include "artifact/pyparse/edit.h"

namespace kopt::stitch {

// A kernel the edit adds and launches once.
struct NewLaunch {
  std::string kernel;  // its name, also its module variable
  std::string source;  // its source
  std::string args;    // the launch's arguments as written, without the stream
};

// A buffer only the new launches use: allocated before the first, deleted after the last.
struct Scratch {
  std::string name;       // the buffer's name in call()
  std::string statement;  // its allocation as written: `NAME = empty_strided_cuda((n, ), (1, ), torch.float32)`
};

struct RegionEdit {
  std::vector<size_t> launches;       // the replaced launches: indices into the entry function's launches
  std::vector<std::string> internal;  // storages the new kernels keep in registers: not allocated any more
  std::string kernel;                 // the last new kernel's name (the fused kernel), also its module variable
  std::string source;                 // its source
  std::string args;                   // its launch's arguments as written, without the stream
  std::vector<NewLaunch> before;      // kernels launched before `kernel`, in order (a split's statistics pass)
  std::vector<Scratch> scratch;       // what `before` hands to `kernel`

  // Every kernel the edit adds, in launch order (`before`, then `kernel`).
  std::vector<NewLaunch> added() const;
  // A split (several launches in place of the replaced ones), not a fusion into one.
  bool is_split() const { return !before.empty(); }
};

// The edits above as byte-range edits of the module's source. Throws kopt::UserError when the edit
// does not fit the module: a launch index out of range, an internal buffer with a view or alias, a
// new kernel name already taken, a scratch name already used.
std::vector<py::Edit> region_edits(const ir::Artifact& art, const RegionEdit& r);

// The byte range of the whole line(s) holding [begin, end), its newline included, when nothing but
// indentation precedes it on its line; throws otherwise.
std::pair<uint32_t, uint32_t> statement_lines(const std::string& source, const ir::Span& s);

}  // namespace kopt::stitch
