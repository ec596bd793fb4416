// Splicing text into a source by byte ranges: the one way the stitcher and the coder's rewrites
// change a file.
//
// Both work on the original text with offsets from its syntax tree (ast.h's Loc::offset), so every
// byte outside the edited ranges stays as it was. Edits are applied together in one pass over the
// original, so no edit's offsets are shifted by another's, and ranges that overlap are a bug in the
// caller (two rewrites of the same bytes), reported rather than spliced into garbage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::py {

// Replace the source's bytes [begin, end) by `text`; begin == end inserts.
struct Edit {
  uint32_t begin, end;
  std::string text;
};

// `source` with every edit applied, in any order given. Edits may touch (one ends where the next
// begins; an insertion there goes between them) and several insertions at one offset keep their
// given order; an edit that overlaps another, or reaches past the source, is an internal error.
std::string apply_edits(std::string_view source, std::vector<Edit> edits);

}  // namespace kopt::py
