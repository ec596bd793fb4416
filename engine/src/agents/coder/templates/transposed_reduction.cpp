#include "agents/coder/templates/transposed_reduction.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "agents/coder/templates/body.h"
#include "agents/coder/templates/templates.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

// Reductions whose last argument is the axis (Inductor writes it as a literal).
const std::set<std::string> kAxisLast = {"tl.sum", "tl.max", "tl.min", "tl.argmax", "tl.argmin", "tl.xor_sum",
                                         "triton_helpers.max2", "triton_helpers.min2", "triton_helpers.prod",
                                         "triton_helpers.any", "triton_helpers.max_with_index",
                                         "triton_helpers.min_with_index", "triton_helpers.welford",
                                         "triton_helpers.online_softmax_reduce"};
// Elementwise helpers (the running update inside the loop).
const std::set<std::string> kElementwise = {"maximum", "minimum", "maximum_with_index", "minimum_with_index",
                                            "welford_reduce", "welford_combine", "promote_to_tensor",
                                            "online_softmax_combine"};
const char* const kRefused[] = {"tl.reshape(", "tl.view(", "tl.trans(", "tl.permute(", "tl.join(", "tl.split(",
                                "tl.gather(", "tl.associative_scan(", "tl.cumsum(", "tl.cumprod(", "tl.sort(",
                                "tl.atomic", "tl.dot(", "tl.flip(", "tl.num_programs(", "tl.program_id(1)",
                                "tl.program_id(2)", "tl.reduce(", "tl.expand_dims(", "tl.broadcast("};

// The line with the reduction axis of every axis-last reduction call turned from 1 to 0;
// false when a reduction call's axis is not the literal 1.
bool flip_reduction_axes(std::string& line) {
  static const std::regex call(R"(((?:tl|triton_helpers)\.\w+)\()");
  std::string out;
  size_t pos = 0;
  std::smatch m;
  std::string rest = line;
  while (std::regex_search(rest, m, call)) {
    size_t open = pos + m.position(0) + m.length(0) - 1;
    if (!kAxisLast.count(m[1])) {
      pos = open + 1, rest = line.substr(pos);
      continue;
    }
    int depth = 0;
    size_t close = open;
    for (; close < line.size(); ++close) {
      if (line[close] == '(' || line[close] == '[') ++depth;
      if (line[close] == ')' || line[close] == ']') --depth;
      if (depth == 0) break;
    }
    // online_softmax_reduce(max, sum, dim, use_fast_math): its axis is the third argument.
    if (m[1] == "triton_helpers.online_softmax_reduce") {
      std::string call_text = line.substr(open, close - open + 1);
      static const std::regex third(R"(^\(\s*\w+\s*,\s*\w+\s*,\s*1\s*,\s*(True|False)\s*\)$)");
      if (!std::regex_match(call_text, third)) return false;
      size_t one = line.rfind('1', close);
      line[one] = '0';
      pos = close + 1, rest = line.substr(pos);
      continue;
    }
    if (close >= line.size() || close < open + 3 || line.compare(close - 3, 3, ", 1") != 0) return false;
    line[close - 1] = '0';
    pos = close + 1, rest = line.substr(pos);
  }
  return true;
}

}  // namespace

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

std::optional<TransposedReduction> transposed_reduction(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) {
    decline(why_not, why);
    return std::nullopt;
  };
  const ir::Kernel& ker = *k.kernel;
  TransposedReduction t;
  bool looped = t.looped = ker.kind == "reduction";
  if (!looped && ker.kind != "persistent_reduction") return no("not a reduction kernel");
  for (const ir::KernelParam& p : ker.signature)
    if (p.is_constexpr && p.name != "XBLOCK" && p.name != "R0_BLOCK") return no("unexpected constexpr " + p.name);
  size_t def = ker.source.find("def " + ker.entry + "(");
  if (def == std::string::npos || ker.source.find("\ndef ", def + 1) != std::string::npos ||
      ker.source.find("\n@", def + 1) != std::string::npos)
    return no("the kernel is not the last function of its source");
  size_t body_at = ker.source.find('\n', def) + 1;
  // Logical lines: Inductor splits long calls (minimum_with_index) over several lines.
  std::string body = ker.source.substr(body_at);
  if (body.find('#') != std::string::npos || body.find("\"\"\"") != std::string::npos)
    return no("comments in the kernel body");
  std::vector<std::string> lines;
  for (const templates::LogicalLine& l : templates::logical_lines(body))
    lines.push_back(std::string(l.indent, ' ') + l.text);
  for (std::string& l : lines) l = replace_all(l, ", )", ")");
  static const std::regex block_re(R"(^ *R0_BLOCK: tl\.constexpr = (\d+)$)"), r0numel_re(R"(^ *r0_numel = (\d+)$)");
  int64_t r0numel = -1;
  bool has_loop = false;
  int loops = 0;
  for (std::string l : lines) {
    std::string s = l.substr(l.find_first_not_of(' '));
    std::smatch m;
    if (std::regex_match(l, m, block_re)) t.fixed_block = std::stoll(m[1]);
    if (std::regex_match(l, m, r0numel_re)) r0numel = std::stoll(m[1]);
    if (s.rfind("xmask = tl.full(", 0) == 0) t.x_unmasked = true;
    if (looped && s.rfind("r0_mask = tl.full(", 0) == 0) t.r_unmasked = true;
    if (s == "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):") {
      // A second loop over the row (a statistics loop, then one that writes the row: softmax, norms) is
      // reoriented line for line like the first.
      if (loops == 2 || !looped) return no("more than two loops");
      has_loop = true;
      ++loops;
    } else if (s.rfind("for ", 0) == 0 || s.rfind("if ", 0) == 0 || s.rfind("while ", 0) == 0 ||
               s.rfind("with ", 0) == 0 || s.back() == ':' || s.back() == '\\' || s.back() == '(' ||
               s.back() == ',') {
      return no("control flow or a statement spanning lines: " + s);
    }
    for (const char* bad : kRefused)
      if (s.find(bad) != std::string::npos) return no(fmt::format("`{}` is not handled", s));
    static const std::regex helper(R"(triton_helpers\.(\w+)\()");
    for (std::sregex_iterator it(s.begin(), s.end(), helper), end; it != end; ++it)
      if (!kElementwise.count((*it)[1]) && !kAxisLast.count("triton_helpers." + (*it)[1].str()))
        return no(fmt::format("`{}` calls an unknown helper", s));
    // The orientation: broadcast axes swapped, the tile shape transposed, reductions along axis 0.
    l = replace_all(l, "[:, None]", "[@@]");
    l = replace_all(l, "[None, :]", "[:, None]");
    l = replace_all(l, "[@@]", "[None, :]");
    l = replace_all(l, "[XBLOCK, R0_BLOCK]", "[R0_BLOCK, XBLOCK]");
    if (!flip_reduction_axes(l)) return no(fmt::format("`{}` reduces along an axis other than the row", s));
    // Nothing else may depend on the orientation.
    std::string rest = l;
    for (const char* ok : {"[R0_BLOCK, XBLOCK]", "tl.arange(0, XBLOCK)", "tl.arange(0, R0_BLOCK)",
                           "tl.program_id(0) * XBLOCK", "tl.program_id(0).to(tl.int64) * XBLOCK",
                           "tl.range(0, r0_numel, R0_BLOCK)", "[None, :]", "[:, None]",
                           "R0_BLOCK: tl.constexpr", "RBLOCK: tl.constexpr = R0_BLOCK", "[R0_BLOCK]", "[1, 1]",
                           // An all-true 1-D mask (xnumel a multiple of every XBLOCK), broadcast after.
                           "tl.full([XBLOCK], True, tl.int1)",
                           ", None)"})  // a store's mask left out
      rest = replace_all(rest, ok, "");
    if (rest.find("XBLOCK") != std::string::npos || rest.find("R0_BLOCK") != std::string::npos ||
        rest.find("None") != std::string::npos || rest.find(":]") != std::string::npos ||
        rest.find("[:") != std::string::npos)
      return no(fmt::format("`{}` depends on the tile's orientation", s));
    t.lines.push_back(l);
  }
  if (looped != has_loop) return no("not Inductor's reduction layout");
  if (!looped && t.fixed_block <= 0) return no("a persistent reduction without its block size");
  if (k.launches.empty()) return no("never launched");
  size_t nrt = 0;
  for (const ir::KernelParam& p : ker.signature) nrt += !p.is_constexpr;
  const json& a = k.launches.front()["args"];
  if (a.size() != nrt || nrt < 3 || !a[nrt - 2].contains("value") || !a[nrt - 1].contains("value"))
    return no("expected (pointers..., xnumel, r0_numel) launch arguments");
  int64_t xnumel = a[nrt - 2]["value"], rnumel = a[nrt - 1]["value"];
  t.xnumel = xnumel, t.rnumel = rnumel;
  for (const json& l : k.launches)
    if (l["args"][nrt - 2].value("value", int64_t{-1}) != xnumel || l["args"][nrt - 1].value("value", int64_t{-1}) != rnumel)
      return no("launches differ in shape");
  if (r0numel >= 0 && r0numel != rnumel) return no("the launch's r0_numel differs from the kernel's");

  return t;
}

std::string with_loop_stages(const std::string& src, int stages) {
  return replace_all(src, "tl.range(0, r0_numel, R0_BLOCK):",
                     fmt::format("tl.range(0, r0_numel, R0_BLOCK, num_stages={}):", stages));
}

}  // namespace kopt::agents::templates
