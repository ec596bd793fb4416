#include "agents/coder/templates/scan_rows.h"

#include <regex>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

// Calls that would make a statement depend on more than its own row element: the template
// would cut them at chunk boundaries. (triton_helpers.maximum/minimum are elementwise.)
const char* const kRowWide[] = {"tl.sum(", "tl.reduce(", "tl.max(", "tl.min(", "tl.argmax(", "tl.argmin(",
                                "tl.cumsum(", "tl.cumprod(", "tl.sort(", "tl.atomic", "tl.num_programs(",
                                "tl.debug_barrier(", "tl.gather(", "tl.reshape(", "tl.view(", "tl.trans(",
                                "tl.permute(", "tl.split(", "tl.join(", "tl.flip("};

bool elementwise_helpers_only(const std::string& s) {
  static const std::regex helper(R"(triton_helpers\.(\w+)\()");
  for (std::sregex_iterator it(s.begin(), s.end(), helper), end; it != end; ++it) {
    std::string fn = (*it)[1];
    if (fn != "maximum" && fn != "minimum" && fn != "promote_to_tensor") return false;
  }
  return true;
}

// R0_BLOCK only as a shape (the template changes its value to the chunk size).
bool block_used_as_shape_only(std::string s) {
  for (const char* shape : {"[XBLOCK, R0_BLOCK]", "tl.arange(0, R0_BLOCK)", "[R0_BLOCK]"})
    for (size_t p; (p = s.find(shape)) != std::string::npos;) s.erase(p, std::string(shape).size());
  return s.find("R0_BLOCK") == std::string::npos && s.find("RBLOCK") == std::string::npos;
}

std::string indent(const std::vector<std::string>& lines, int n) {
  std::string out;
  for (const std::string& l : lines) out += std::string(n, ' ') + l + "\n";
  return out;
}

}  // namespace

std::vector<Candidate> scan_rows(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  if (ker.kind != "persistent_reduction") return no("not a persistent (whole-row) scan kernel");
  std::vector<const ir::KernelParam*> runtime;
  for (const ir::KernelParam& p : ker.signature) {
    if (p.is_constexpr && p.name != "XBLOCK") return no("unexpected constexpr parameter " + p.name);
    if (!p.is_constexpr) runtime.push_back(&p);
  }
  if (runtime.size() < 4 || runtime[runtime.size() - 2]->name != "xnumel" || runtime.back()->name != "r0_numel")
    return no("expected (pointers..., xnumel, r0_numel) parameters");
  std::string why;
  auto body = straight_line_body(ker, &why);
  if (!body) return no(why);

  // The preamble Inductor writes for a persistent kernel; the row-index statement starts the
  // per-chunk part.
  static const std::regex r0numel_re(R"(^r0_numel = (\d+)$)"), block_re(R"(^R0_BLOCK: tl\.constexpr = (\d+)$)");
  static const std::regex scan_re(R"(^(\w+), = tl\.associative_scan\(\((\w+),\), 1, (\w+)\)$)");
  int64_t numel = -1, block = -1;
  int rindex = -1, scan = -1;
  bool full_mask = false, masked = false;
  std::string scan_out, scan_in, combine;
  for (size_t i = 0; i < body->size(); ++i) {
    const std::string& s = (*body)[i];
    std::smatch m;
    if (std::regex_match(s, m, r0numel_re)) numel = std::stoll(m[1]);
    else if (std::regex_match(s, m, block_re)) block = std::stoll(m[1]);
    else if (s == "r0_index = tl.arange(0, R0_BLOCK)[None, :]") rindex = static_cast<int>(i);
    else if (s == "r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]") full_mask = true;
    else if (s == "r0_mask = r0_index < r0_numel") masked = true;
    else if (s.find("tl.associative_scan(") != std::string::npos) {
      if (scan >= 0) return no("the kernel has more than one scan");
      if (!std::regex_match(s, m, scan_re)) return no("a multi-operand or non-row scan: " + s);
      scan = static_cast<int>(i), scan_out = m[1], scan_in = m[2], combine = m[3];
      continue;
    }
    for (const char* bad : kRowWide)
      if (s.find(bad) != std::string::npos) return no(fmt::format("`{}` is not elementwise along the row", s));
    if (!elementwise_helpers_only(s)) return no(fmt::format("`{}` calls a reduction helper", s));
  }
  if (scan < 0) return no("no tl.associative_scan along the row");
  if (numel <= 0 || block < numel || rindex < 0 || rindex > scan || !(full_mask || masked))
    return no("not Inductor's persistent row layout (r0_numel, R0_BLOCK, r0_index, r0_mask)");
  if (full_mask && block != numel) return no("an unmasked row whose block differs from its length");
  if (ker.source.find("def " + combine + "(") == std::string::npos ||
      ker.source.find("def " + combine + "(") > ker.source.find("def " + ker.entry + "("))
    return no("the combine function is not defined before the kernel");
  for (int i = rindex; i < static_cast<int>(body->size()); ++i)
    if (!block_used_as_shape_only((*body)[i])) return no(fmt::format("`{}` uses the block size as a value", (*body)[i]));
  for (const json& l : k.launches) {
    const json& a = l["args"];
    if (a.size() != runtime.size() || !a[a.size() - 1].contains("value")) return no("unexpected launch arguments");
    if (a[a.size() - 1]["value"].get<int64_t>() != numel) return no("a launch's row length differs from the kernel's");
  }
  if (k.launches.empty()) return no("never launched");
  int64_t rows = k.launches.front()["args"][runtime.size() - 2].value("value", int64_t{0});
  if (rows <= 0) return no("no row count in the launch");

  // Preamble (before the row index) with the block set to the chunk; then the chunk code.
  std::vector<std::string> pre, chunk;
  for (int i = 0; i < rindex; ++i) {
    const std::string& s = (*body)[i];
    if (std::regex_match(s, block_re)) pre.push_back("R0_BLOCK: tl.constexpr = CHUNK");
    else if (s != "r0_offset = 0") pre.push_back(s);
  }
  std::set<std::string> local;
  for (int i = rindex; i < static_cast<int>(body->size()); ++i) {
    std::string s = (*body)[i];
    if (s == "r0_offset = 0") continue;
    if (i == rindex) s = "r0_index = r0_offset + tl.arange(0, R0_BLOCK)[None, :]";
    chunk.push_back(s);
    for (const std::string& n : assigned_names(s)) local.insert(n);
  }
  local.insert("r0_offset");
  const std::string carry = "kopt_carry";
  // The first chunk (renamed, so the loop's temporaries are not carried across iterations):
  // its scan starts the carry; later chunks add the carry in front of their own scan.
  auto chunk_code = [&](bool first, bool more) {
    std::vector<std::string> out;
    for (const std::string& s : chunk) {
      bool is_scan = s.find("tl.associative_scan(") != std::string::npos;
      std::string t = first ? rename_words(s, local, "_c0") : s;
      out.push_back(t);
      if (!is_scan) continue;
      std::string o = first ? scan_out + "_c0" : scan_out, in = first ? scan_in + "_c0" : scan_in;
      std::string total = fmt::format("tl.reduce({}, 1, {}, keep_dims=True)", in, combine);
      if (!first) out.push_back(fmt::format("{} = {}({}, {})", o, combine, carry, o));
      if (more) out.push_back(first ? fmt::format("{} = {}", carry, total)
                                    : fmt::format("{} = {}({}, {})", carry, combine, carry, total));
    }
    return out;
  };
  const std::string params = entry_params(ker);
  std::vector<int64_t> chunks;
  for (int64_t c : {256, 512, 1024, 2048, 4096})
    if (c < block && (full_mask ? numel % c == 0 : true)) chunks.push_back(c);
  if (block <= 256 && block >= 64) chunks.push_back(block / 2);
  if (block <= 8192) chunks.push_back(block);  // the whole row at once, with the template's launch configs
  std::vector<Candidate> outc;
  for (int64_t ch : chunks) {
    bool loop = ch < block;
    std::string src = fmt::format(
        "def {name}({params}):\n"
        "    # kernelopt template scan_rows: chunks of {ch} along the row, a carried prefix per row.\n"
        "{pre}    r0_offset_c0 = 0\n{first}",
        fmt::arg("name", ker.entry), fmt::arg("params", params), fmt::arg("ch", ch),
        fmt::arg("pre", indent(pre, 4)), fmt::arg("first", indent(chunk_code(true, loop), 4)));
    size_t p = src.find("CHUNK");
    src.replace(p, 5, std::to_string(ch));
    if (loop)
      src += "    for r0_offset in tl.range(R0_BLOCK, " + std::to_string(numel) + ", R0_BLOCK):\n" +
             indent(chunk_code(false, true), 8);
    std::string source = replace_entry(ker, src);
    // Rows per program so a tile holds 1K-4K elements (enough loads in flight per chunk), and
    // warps so each thread holds 8-16 of them.
    for (int64_t xb : {1, 2, 4, 8}) {
      int64_t tile = xb * ch;
      if (xb > next_pow2(rows) || tile > 4096 || (tile < 1024 && xb * 2 <= next_pow2(rows) && xb < 8)) continue;
      for (int w : {2, 4, 8, 16}) {
        int64_t per_thread = tile / (32 * w);
        if (per_thread < 8 || per_thread > 16) continue;
        json c = {{"XBLOCK", xb}, {"num_warps", w}, {"num_stages", loop ? 2 : 1}};
        outc.push_back(instance(ker, "scan", source, c,
                                fmt::format("scan_rows, chunk {}, {}", ch, ir::describe_config(c))));
      }
    }
  }
  if (outc.empty()) return no("no chunk and launch config fit the row");
  return outc;
}

}  // namespace kopt::agents::templates
