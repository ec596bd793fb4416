#include "artifact/pyparse/edit.h"

#include <algorithm>

#include "util/error.h"

namespace kopt::py {

std::string apply_edits(std::string_view source, std::vector<Edit> edits) {
  // By start, an insertion before a replacement starting at the same offset; stable, so
  // insertions at one offset stay in the caller's order.
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::string out;
  size_t copied = 0;  // the source is copied up to here
  for (const Edit& e : edits) {
    KOPT_INTERNAL_ASSERT(e.begin <= e.end && e.end <= source.size(),
                         fmt::format("edit [{}, {}) outside a source of {} bytes", e.begin, e.end, source.size()));
    KOPT_INTERNAL_ASSERT(e.begin >= copied,
                         fmt::format("edit [{}, {}) overlaps another edit ending at {}", e.begin, e.end, copied));
    out.append(source, copied, e.begin - copied);
    out += e.text;
    copied = e.end;
  }
  out.append(source, copied);
  return out;
}

}  // namespace kopt::py
