#include "agents/coder/rewrites/tail_mask.h"

#include <fmt/format.h>

#include "agents/coder/rewrites/source_edit.h"
#include "agents/coder/rewrites/x_index.h"

namespace kopt::agents::rewrites {

using namespace detail;

std::optional<std::string> tail_mask(const ir::Kernel& k, std::string* why) {
  auto no = [&](const std::string& reason) -> std::optional<std::string> {
    say(why, "tail mask: " + reason);
    return std::nullopt;
  };
  auto pw = untiled_pointwise(k, "tail mask", why);
  if (!pw) return std::nullopt;
  const std::string& source = k.source;
  const py::Node* entry = pw->entry;
  auto x = x_index_1d(source, entry, "tail mask", why);
  if (!x) return std::nullopt;
  if (x->mask_is_full) return no("the kernel is unmasked");
  if (x->numel % 16 == 0) return no(fmt::format("xnumel {} is a multiple of 16: its accesses are vectors already",
                                                x->numel));
  const auto& stmts = entry->list("body");
  if (stmts.size() < 4 || text_of(source, stmts[1]) != "xoffset = tl.program_id(0) * XBLOCK" ||
      stmts[2] != x->index_stmt || stmts[3] != x->mask_stmt)
    return no("not Inductor's order (xnumel, the offset, the index, the mask, then the body)");
  if (count_words(pw->body, "xoffset") != 2) return no("the x offset is used beyond the index");
  // Every statement after the mask, twice: indented under each branch.
  const size_t from = x->mask_stmt->begin.offset, end = stmts.back()->end.offset;
  const std::string ind(x->mask_stmt->begin.col, ' ');
  const std::string rest =
      indent_from(source.substr(x->mask_stmt->end.offset, end - x->mask_stmt->end.offset), 0, entry->begin.col);
  std::string full = fmt::format("xmask = tl.full([XBLOCK], True, tl.int1){}", x->suffix);
  std::string mask = text_of(source, x->mask_stmt);
  std::string edit =
      fmt::format("if xoffset + XBLOCK <= xnumel:\n{0}    {1}{2}\n{0}else:\n{0}    {3}{2}", ind, full, rest, mask);
  std::string out = source.substr(0, from) + edit + source.substr(end);
  if (!parse(out, k.name, why)) return no("the rewritten kernel does not parse");
  return out;
}

}  // namespace kopt::agents::rewrites
