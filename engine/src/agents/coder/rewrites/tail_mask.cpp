#include "agents/coder/rewrites/tail_mask.h"

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/x_index.h"

namespace kopt::agents::rewrites {

using namespace detail;

std::optional<std::string> tail_mask(const std::string& source, const std::string& name, std::string* why) {
  auto no = [&](const std::string& reason) -> std::optional<std::string> {
    say(why, "tail mask: " + reason);
    return std::nullopt;
  };
  auto ks = parse(source, name, why);
  if (!ks) return std::nullopt;
  const py::Node* entry = ks->entry;
  const std::string body = text_of(source, entry);
  if (count_words(body, "yindex") || count_words(body, "YBLOCK")) return no("the kernel is tiled already");
  auto x = x_index_1d(source, entry, "tail mask", why);
  if (!x) return std::nullopt;
  if (x->mask_is_full) return no("the kernel is unmasked");
  if (x->numel % 16 == 0) return no(fmt::format("xnumel {} is a multiple of 16: its accesses are vectors already",
                                                x->numel));
  const auto& stmts = entry->list("body");
  if (stmts.size() < 4 || text_of(source, stmts[1]) != "xoffset = tl.program_id(0) * XBLOCK" ||
      stmts[2] != x->index_stmt || stmts[3] != x->mask_stmt)
    return no("not Inductor's order (xnumel, the offset, the index, the mask, then the body)");
  if (count_words(body, "xoffset") != 2) return no("the x offset is used beyond the index");
  // Every statement after the mask, twice: indented under each branch.
  const size_t from = x->mask_stmt->begin.offset, end = stmts.back()->end.offset;
  const std::string ind(x->mask_stmt->begin.col, ' ');
  std::string rest = source.substr(x->mask_stmt->end.offset, end - x->mask_stmt->end.offset);
  auto indented = [&](const std::string& text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      size_t stop = nl == std::string::npos ? text.size() : nl + 1;
      std::string line = text.substr(pos, stop - pos);
      bool blank = line.find_first_not_of(" \n") == std::string::npos;
      out += (blank ? "" : "    ") + line;
      pos = stop;
    }
    return out;
  };
  std::string full = fmt::format("xmask = tl.full([XBLOCK], True, tl.int1){}", x->suffix);
  std::string mask = text_of(source, x->mask_stmt);
  std::string edit = fmt::format("if xoffset + XBLOCK <= xnumel:\n{0}    {1}{2}\n{0}else:\n{0}    {3}{4}", ind, full,
                                 indented(rest), mask, indented(rest));
  std::string out = source.substr(0, from) + edit + source.substr(end);
  if (!parse(out, name, why)) return no("the rewritten kernel does not parse");
  return out;
}

}  // namespace kopt::agents::rewrites
