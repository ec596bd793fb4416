// The row statistics of a softmax — each row's max and sum of exp(x - max) — as Inductor writes them
// for cross-entropy and for long-row softmax (`prims.prepare_softmax_online`: one input, two outputs
// of one value per row), in one pass with the row in registers; the schedule of row_softmax.
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "agents/coder/config_space.h"
#include "agents/coder/templates/row_softmax.h"
#include "agents/coder/templates/templates.h"
#include "artifact/pin_config.h"
#include "verify/outputs.h"

namespace kopt::agents::templates {

using nlohmann::json;

namespace {

int64_t numel_of(const json& t) {
  int64_t n = 1;
  for (const json& d : t.value("shape", json::array())) n *= d.get<int64_t>();
  return n;
}

// Which stored value is the row max and which the sum: the variable each `tl.store(ptr + (x0), v, ...)`
// stores, followed through plain aliases (`a = b[:, None]`, `a = b.to(...)`) to where the kernel
// computes it (max2 / tl.sum, or the pair online_softmax_reduce returns, max first).
struct Roles {
  std::string max_ptr, sum_ptr;
};

std::optional<Roles> stat_roles(const std::string& src) {
  static const std::regex pair_re(R"((\w+), (\w+) = triton_helpers\.online_softmax_reduce\()");
  static const std::regex max_re(R"((\w+) = triton_helpers\.max2\()");
  static const std::regex sum_re(R"((\w+) = tl\.sum\()");
  static const std::regex alias_re(R"((\w+) = (\w+)(\[:, None\])?(\.to\(tl\.\w+\))?\s*$)");
  // The mask is `None` when Inductor knows the row count divides XBLOCK (8192 rows of a cross-entropy).
  static const std::regex store_re(R"(tl\.store\((\w+) \+ \(x0\), (\w+), (?:xmask|None)\))");
  std::set<std::string> maxes, sums;
  std::map<std::string, std::string> alias;
  std::vector<std::pair<std::string, std::string>> stores;
  std::istringstream in(src);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, pair_re)) maxes.insert(m[1]), sums.insert(m[2]);
    else if (std::regex_search(line, m, max_re)) maxes.insert(m[1]);
    else if (std::regex_search(line, m, sum_re)) sums.insert(m[1]);
    else if (std::regex_search(line, m, alias_re) && m[1] != m[2]) alias[m[1]] = m[2];
    if (std::regex_search(line, m, store_re)) stores.emplace_back(m[1], m[2]);
  }
  if (stores.size() != 2) return std::nullopt;
  Roles r;
  for (auto [ptr, v] : stores) {
    for (int hops = 0; hops < 4 && !maxes.count(v) && !sums.count(v) && alias.count(v); ++hops) v = alias[v];
    if (maxes.count(v)) r.max_ptr = ptr;
    else if (sums.count(v)) r.sum_ptr = ptr;
  }
  if (r.max_ptr.empty() || r.sum_ptr.empty()) return std::nullopt;
  return r;
}

}  // namespace

std::vector<Candidate> row_softmax_stats(const KernelProfile& k, std::string* why_not) {
  auto no = [&](const std::string& why) { return decline(why_not, why); };
  const ir::Kernel& ker = *k.kernel;
  std::vector<const ir::KernelParam*> runtime;
  bool has_r0_block = false;
  for (const ir::KernelParam& p : ker.signature) {
    if (p.is_constexpr) has_r0_block = has_r0_block || p.name == "R0_BLOCK";
    else runtime.push_back(&p);
  }
  if (runtime.size() != 5 || runtime[3]->name != "xnumel" || runtime[4]->name != "r0_numel")
    return no("expected (input, output, output, xnumel, r0_numel) parameters");
  if (verify::pure_output_args(ker) != std::vector<size_t>{1, 2}) return no("expected two pure output pointers");
  auto roles = stat_roles(ker.source);
  if (!roles) return no("not a row max and a row sum of exp stored per row");
  if (k.launches.empty()) return no("never launched");
  const json& first = k.launches.front()["args"];
  if (first.size() != 5 || !first[3].contains("value") || !first[4].contains("value"))
    return no("unexpected launch arguments");
  int64_t rows = first[3]["value"], cols = first[4]["value"];
  static const std::set<std::string> dtypes = {"float32", "float16", "bfloat16"};
  for (const json& l : k.launches) {
    const json& a = l["args"];
    if (a.size() != 5 || a[3].value("value", int64_t{-1}) != rows || a[4].value("value", int64_t{-1}) != cols)
      return no("launches differ in shape");
    if (!is_contiguous(a[0]) || numel_of(a[0]) != rows * cols || a[0]["shape"].back().get<int64_t>() != cols)
      return no("input rows are not contiguous");
    for (int o : {1, 2})
      if (!is_contiguous(a[o]) || numel_of(a[o]) != rows || !dtypes.count(a[o].value("dtype", "")))
        return no("the outputs are not one contiguous value per row");
    if (!dtypes.count(a[0].value("dtype", ""))) return no("unsupported dtype");
  }
  if (cols > kMaxSoftmaxRow) return no(fmt::format("rows of {} elements do not fit in registers", cols));
  int64_t rb = next_pow2(cols);
  bool wide = rows * rb >= (int64_t{1} << 31);
  std::string def = fmt::format(
      "def {name}({params}):\n"
      "    # kernelopt template row_softmax_stats: one pass, each row read once into registers.\n"
      "    RB: tl.constexpr = {rb}\n"
      "    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]\n"
      "    cols = tl.arange(0, RB)[None, :]\n"
      "    mask = (rows < xnumel) & (cols < r0_numel)\n"
      "    x = tl.load({in} + (rows{widen} * r0_numel + cols), mask, other=float('-inf'), "
      "eviction_policy='evict_first').to(tl.float32)\n"
      "    m = tl.max(x, 1)[:, None]\n"
      "    s = tl.sum(tl.where(mask, tl.exp(x - m), 0.0), 1)[:, None]\n"
      "    tl.store({mx} + rows, m.to({mx}.dtype.element_ty), rows < xnumel)\n"
      "    tl.store({sm} + rows, s.to({sm}.dtype.element_ty), rows < xnumel)\n",
      fmt::arg("name", ker.entry), fmt::arg("params", entry_params(ker)), fmt::arg("rb", rb),
      fmt::arg("in", runtime[0]->name), fmt::arg("widen", wide ? ".to(tl.int64)" : ""),
      fmt::arg("mx", roles->max_ptr), fmt::arg("sm", roles->sum_ptr));
  std::string source = replace_entry(ker, def);
  std::vector<Candidate> outc;
  for (const json& c : row_softmax_configs(rows, rb, has_r0_block))
    outc.push_back(instance(ker, k.family, source, c, fmt::format("row softmax stats one-pass, {}", ir::describe_config(c))));
  if (outc.empty()) return no("no launch config fits the row length");
  return outc;
}

}  // namespace kopt::agents::templates
