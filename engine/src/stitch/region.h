// Host-code edits for a fused region: one launch of a fused kernel in place of several launches in
// call(), and the internal buffers it no longer needs gone. Every other byte of the module stays;
// G1 (verify/region_host.h) holds a candidate module to exactly these edits.
//
// The edits, on the entry function:
//   - the fused kernel's declaration (`NAME = async_compile.triton('NAME', '''...''', ...)`, shaped
//     like the first fused kernel's) goes in after the last fused kernel's declaration;
//   - the first fused launch's statement becomes `NAME.run(ARGS, stream=S)` (its own stream);
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

struct RegionEdit {
  std::vector<size_t> launches;       // the fused launches: indices into the entry function's launches
  std::vector<std::string> internal;  // storages the fused kernel keeps in registers: not allocated any more
  std::string kernel;                 // the fused kernel's name, also its module variable
  std::string source;                 // its source
  std::string args;                   // the fused launch's arguments as written, without the stream
};

// The edits above as byte-range edits of the module's source. Throws kopt::UserError when the edit
// does not fit the module: a launch index out of range, an internal buffer with a view or alias, a
// fused kernel name already taken.
std::vector<py::Edit> region_edits(const ir::Artifact& art, const RegionEdit& r);

// The byte range of the whole line(s) holding [begin, end), its newline included, when nothing but
// indentation precedes it on its line; throws otherwise.
std::pair<uint32_t, uint32_t> statement_lines(const std::string& source, const ir::Span& s);

}  // namespace kopt::stitch
