#include "agents/coder/fusion/column_loop.h"

#include <optional>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/coder/config_space.h"
#include "agents/coder/fusion/pair.h"
#include "agents/coder/fusion/split_launch.h"
#include "agents/coder/fusion/split_loops.h"
#include "profile/roofline.h"

namespace kopt::agents::fusion {

namespace {

// The launch configs tried: blocks of columns a program, each walking every row.
struct Block {
  int64_t xblock, warps;
};
constexpr Block kBlocks[] = {{1024, 4}, {2048, 8}};

}  // namespace

std::vector<std::pair<std::string, stitch::RegionEdit>> column_loop(const ir::Artifact& a, const ir::Function& f,
                                                                    size_t li, std::string* why,
                                                                    const ColumnLoopOptions& o) {
  using Out = std::vector<std::pair<std::string, stitch::RegionEdit>>;
  auto no = [&](std::string w) { return *why = std::move(w), Out{}; };
  std::string w;
  auto target = read_split_launch(a, f, li, {"xnumel"}, &w, "pointwise");
  if (!target) return no(w);
  const SplitLaunch& T = *target;
  const ir::Kernel& k = *T.kernel;
  if (T.constexprs != std::vector<std::string>{"XBLOCK"}) return no("not (pointers..., xnumel, XBLOCK)");
  auto body = entry_body(k, &w);
  if (!body) return no(w);
  // Inductor's prologue, then its two digits; any other use of xindex is a third digit or an expression the
  // loop would have to rebuild.
  static const std::regex numel(R"(^xnumel = (\d+)$)"), offset(R"(^xoffset = tl\.program_id\(0\)( \* XBLOCK|\.to\(tl\.int64\) \* XBLOCK)$)"),
      index(R"(^xindex = xoffset \+ tl\.arange\(0, XBLOCK\)\[:\](\.to\(tl\.int64\))?$)"),
      mask(R"(^xmask = (xindex < xnumel|tl\.full\(\[XBLOCK\], True, tl\.int1\))$)"),
      row(R"(^(\w+) = xindex // (\d+)$)"), col(R"(^(\w+) = \(?xindex % (\d+)\)?$)"), alias(R"(^(\w+) = xindex$)");
  int64_t total = 0, n_row = 0, n_col = 0;
  bool wide = false, masked = true;
  std::string row_name, col_name;
  std::vector<std::string> aliases, rest;
  for (const templates::LogicalLine& l : *body) {
    std::smatch m;
    if (l.indent != 4) return no("a statement inside a block (the body is not straight-line)");
    if (std::regex_match(l.text, m, numel)) total = std::stoll(m[1]);
    else if (std::regex_match(l.text, m, offset)) wide = wide || m[1].str().starts_with(".to");
    else if (std::regex_match(l.text, m, index)) wide = wide || m[1].matched;
    else if (std::regex_match(l.text, m, mask)) masked = m[1].str() == "xindex < xnumel";
    else if (std::regex_match(l.text, m, row)) row_name = m[1], n_row = std::stoll(m[2]);
    else if (std::regex_match(l.text, m, col)) col_name = m[1], n_col = std::stoll(m[2]);
    else if (std::regex_match(l.text, m, alias)) aliases.push_back(m[1]);
    else if (mentions(l.text, "xindex") || mentions(l.text, "xoffset")) return no("xindex read beyond its two digits");
    else rest.push_back(indented(l));
  }
  if (total <= 0) return no("no constant xnumel");
  if (row_name.empty() || col_name.empty() || n_row != n_col) return no("not two digits `xindex // N`, `xindex % N`");
  const int64_t N = n_col, R = total / N;
  if (R * N != total || R < 2) return no(fmt::format("xnumel {} is not rows of {}", total, N));
  // The operand read by the column alone, its bytes: what the rows re-read.
  static const std::regex load(R"(tl\.load\((\w+) \+ \((\w+)\))");
  int64_t column_bytes = 0;
  for (const std::string& l : rest)
    for (std::sregex_iterator it(l.begin(), l.end(), load), end; it != end; ++it)
      if ((*it)[2] == col_name)
        for (const DeclParam& p : T.params)
          if (p.name == (*it)[1])
            column_bytes = std::max(column_bytes, N * static_cast<int64_t>(profile::dtype_size(profile::pointee_dtype(p.type))));
  if (column_bytes == 0) return no("no operand read by the column alone");
  if (column_bytes < o.min_column_bytes)
    return no(fmt::format("its column operand ({} bytes) stays in L2 beside the stream (below {})", column_bytes,
                          o.min_column_bytes));
  Out out;
  for (const Block& b : kBlocks) {
    // Inductor left its accesses unmasked (xmask all true): every block must be whole columns then.
    if (!masked && N % b.xblock) continue;
    std::string text = fmt::format("    xnumel = {}\n", total);
    text += "    kopt_col = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]\n";
    text += fmt::format("    kopt_colmask = kopt_col < {}\n", N);
    text += fmt::format("    for kopt_row in range(0, {}):\n", R);
    text += fmt::format("        xindex = {} * {} + kopt_col\n", wide ? "tl.cast(kopt_row, tl.int64)" : "kopt_row", N);
    text += "        xmask = kopt_colmask\n";
    text += fmt::format("        {} = {} + tl.zeros([XBLOCK], {})\n", row_name,
                        wide ? "tl.cast(kopt_row, tl.int64)" : "kopt_row", wide ? "tl.int64" : "tl.int32");
    text += fmt::format("        {} = kopt_col\n", col_name);
    for (const std::string& x : aliases) text += fmt::format("        {} = xindex\n", x);
    for (const std::string& l : rest) text += "    " + l;
    std::vector<DeclParam> ps = T.params;
    ps.push_back({"xnumel", "i32", N % 16 == 0});
    ps.push_back({"XBLOCK", "constexpr", false});
    nlohmann::json cfg = {{"XBLOCK", b.xblock}, {"num_warps", b.warps}, {"num_stages", 1}};
    auto launch = split_kernel(T, "_cols", text, ps, {}, cfg, fmt::format("{}, {}", fmt::join(T.ptr_args, ", "), N), &w);
    if (!launch) return no(w);
    stitch::RegionEdit e;
    e.launches = {li};
    e.kernel = launch->kernel, e.source = launch->source, e.args = launch->args;
    out.emplace_back(fmt::format("walk {} rows of {} by columns ({} programs of {} columns, each reading its columns' "
                                 "{}-byte operand once), XBLOCK={} num_warps={}",
                                 R, N, cdiv(N, b.xblock), b.xblock, column_bytes, b.xblock, b.warps),
                     std::move(e));
  }
  if (out.empty()) return no(fmt::format("unmasked, and no block of columns divides {}", N));
  return out;
}

}  // namespace kopt::agents::fusion
