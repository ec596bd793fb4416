#include "agents/coder/config_space.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "profile/roofline.h"

namespace kopt::agents {

using nlohmann::json;

namespace {

// Inductor's TRITON_MAX_BLOCK: the code Inductor generates assumes no block exceeds these
// (a dimension it left unmasked is a multiple of them).
const std::map<std::string, int64_t> kMaxBlock = {{"X", 4096}, {"Y", 1024}, {"Z", 1024}, {"R0", 65536}};
// CUDA grid limit of the second and third grid dimensions (Grid2D puts y there).
constexpr int64_t kMaxGridYZ = 65535;

// "XBLOCK" -> "X", "R0_BLOCK" -> "R0".
std::string dim_of(const std::string& block) {
  std::string d = block.substr(0, block.size() - 5);
  if (!d.empty() && d.back() == '_') d.pop_back();
  return d;
}

int64_t elements(const KernelShape& s, const json& c) {
  int64_t e = 1;
  for (const std::string& b : s.blocks) e *= c.value(b, 1);
  if (s.fixed_r0_block) e *= *s.fixed_r0_block;
  return e;
}

// Static score: lower is more promising. Aims at 4-16 elements per thread and enough
// programs to fill every SM a few times; an OUTER reduction (x is the contiguous dimension, r
// strides across rows) also wants XBLOCK elements to fill a 32-byte sector, or each load moves
// sectors it mostly throws away (XBLOCK=1 on fp32 uses 4 bytes of 32).
double score(const KernelShape& s, const json& c, int sm_count) {
  double per_thread = static_cast<double>(elements(s, c)) / (32.0 * c.value("num_warps", 4));
  double programs = 1;
  for (const std::string& b : s.blocks)
    if (b != "R0_BLOCK") programs *= std::ceil(static_cast<double>(s.numel.at(dim_of(b))) / c.value(b, 1));
  double fill = programs / (4.0 * sm_count);
  double sc = std::abs(std::log2(std::max(per_thread, 0.25) / 8.0));
  if (fill < 1) sc += 2 * std::log2(1 / std::max(fill, 1e-6));
  if (s.reduction_hint.starts_with("OUTER") && c.contains("XBLOCK")) {
    double run = static_cast<double>(c["XBLOCK"].get<int64_t>() * s.elem_bytes);
    if (run < 32) sc += 2 * std::log2(32 / run);
  }
  // Each axis some access walks memory along: its block should span a sector (or the whole axis, or
  // the digit's wrap, where shorter). Counted once per axis, so a read and a write along different
  // axes both weigh.
  std::set<std::string> seen;
  for (const ContiguousRun& r : s.contiguous) {
    if (!c.contains(r.block) || !seen.insert(r.block).second) continue;
    int64_t extent = s.numel.at(dim_of(r.block));
    if (r.radix > 0) extent = std::min(extent, r.radix);
    // A one-pass reduction over a strided axis reads each row's x run on its own (rows are a stride
    // apart), so the run should fill a warp's vector loads, 32 lanes of 16 bytes, not just one sector:
    // XBLOCK=16 of bf16 with R0_BLOCK=128 screened 1.3-1.6x slower than Inductor's 256 x 2 (H100).
    double sector = s.strided_reduction && s.row_passes == 1 && r.block == "XBLOCK" ? 512.0 : 32.0;
    double want = std::min(sector, static_cast<double>(extent * s.elem_bytes));
    double run = static_cast<double>(std::min(c[r.block].get<int64_t>(), extent) * s.elem_bytes);
    if (run < want) sc += 2 * std::log2(want / run);
  }
  return sc + 0.1 * c.value("num_stages", 1);
}

std::vector<int64_t> powers(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t x = lo; x <= hi; x <<= 1) v.push_back(x);
  return v;
}

bool is_launch_option(const std::string& key) { return key == "num_warps" || key == "num_stages"; }

// A user kernel's config space keeps every constexpr of the captured config (the launch's grid
// depends on them) and varies num_warps and num_stages, which change no result.
std::optional<KernelShape> user_kernel_shape(const ir::Kernel& k, std::string* why_not) {
  const json configs = k.decorator_args.value("configs", json::array());
  if (!configs.is_array() || configs.size() != 1 || !configs[0].is_object()) {
    if (why_not) *why_not = "a user kernel is searched from the one config it was captured with";
    return std::nullopt;
  }
  KernelShape s;
  s.kind = k.kind;
  s.base_config = configs[0];
  s.launch_stages_matter = true;  // its space is the launch options alone: num_stages among them
  if (why_not) why_not->clear();
  return s;
}

bool user_config_is_safe(const KernelShape& s, const json& c) {
  for (const auto& [key, v] : s.base_config.items())
    if (!is_launch_option(key) && (!c.contains(key) || c[key] != v)) return false;
  for (const auto& [key, v] : c.items())
    if (!is_launch_option(key) && !s.base_config.contains(key)) return false;
  int64_t w = c.value("num_warps", 4), st = c.value("num_stages", 3);
  return w >= 1 && w <= 16 && !(w & (w - 1)) && st >= 1 && st <= 5;
}

}  // namespace

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

std::optional<KernelShape> kernel_shape(const ir::Kernel& k, const json& launch, std::string* why_not) {
  auto no = [&](const std::string& why) -> std::optional<KernelShape> {
    if (why_not) *why_not = why;
    return std::nullopt;
  };
  if (k.kind == "user_autotune") return user_kernel_shape(k, why_not);
  static const std::set<std::string> searchable = {"pointwise", "reduction", "persistent_reduction", "split_scan"};
  if (!searchable.count(k.kind))
    return no(k.kind == "template" ? "GEMM templates are Inductor's autotuned choice among vendor-like tiles"
                                   : "kernels of kind " + k.kind + " have no searchable launch config");
  KernelShape s;
  s.kind = k.kind;
  s.launch_stages_matter = k.source.find("tl.dot(") != std::string::npos;
  if (k.kind == "split_scan") {
    // The workspace holds one lookback slot per block of at least min_split_scan_rblock elements
    // (Inductor's split_scan heuristic raises every config to it): smaller blocks would overrun it.
    s.min_r0_block = 256;
    if (k.inductor_meta.contains("min_split_scan_rblock") && k.inductor_meta["min_split_scan_rblock"].is_number_integer())
      s.min_r0_block = k.inductor_meta["min_split_scan_rblock"].get<int64_t>();
  }
  if (k.decorator_args.contains("reduction_hint") && k.decorator_args["reduction_hint"].is_string())
    s.reduction_hint = k.decorator_args["reduction_hint"].get<std::string>();
  // Runtime arguments are the non-constexpr parameters in order; numels are among them.
  const json args = launch.value("args", json::array());
  for (const json& a : args)  // the tensors' element sizes, as the roofline counts them
    if (size_t bytes = a.is_object() ? profile::dtype_size(a.value("dtype", "")) : 0)
      s.elem_bytes = std::min(s.elem_bytes, static_cast<int>(bytes));
  size_t i = 0;
  for (const ir::KernelParam& p : k.signature) {
    if (p.is_constexpr) {
      if (p.name.size() >= 6 && p.name.ends_with("BLOCK")) s.blocks.push_back(p.name);
      continue;
    }
    if (i < args.size() && p.name.ends_with("numel") && args[i].contains("value") && args[i]["value"].is_number_integer()) {
      std::string dim = p.name.substr(0, p.name.size() - 5);  // "xnumel" -> "x", "r0_numel" -> "r0_"
      if (dim.ends_with("_")) dim.pop_back();
      std::transform(dim.begin(), dim.end(), dim.begin(), ::toupper);
      s.numel[dim] = args[i]["value"].get<int64_t>();
    }
    ++i;
  }
  for (const std::string& b : s.blocks) {
    if (!kMaxBlock.count(dim_of(b))) return no("block " + b + " is not searched");
    if (!s.numel.count(dim_of(b))) return no("no numel argument for " + b);
  }
  if (s.blocks.empty()) return no("the kernel takes no block sizes");
  std::smatch m;
  static const std::regex fixed(R"(R0_BLOCK\s*:\s*tl\.constexpr\s*=\s*(\d+))");
  if (std::regex_search(k.source, m, fixed)) s.fixed_r0_block = std::stoll(m[1]);
  for (const auto& [dim, n] : s.numel) {
    std::string lower = dim;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    std::string idx = lower == "r0" ? "r0_index < r0_numel" : lower + "index < " + lower + "numel";
    s.masked[dim] = k.source.find(idx) != std::string::npos;
  }
  if (s.blocks.size() > 1) {  // tiled pointwise kernels and looped reductions
    s.contiguous = contiguous_runs(k);
    // Only the tiled axes count: an access along an axis no block tiles tells the tile nothing.
    std::erase_if(s.contiguous, [&](const ContiguousRun& r) {
      return std::find(s.blocks.begin(), s.blocks.end(), r.block) == s.blocks.end();
    });
    // A looped reduction or scan whose accesses all walk other axes than r (the reduced axis strided: a
    // sum or softmax over dim 0, x contiguous; a cumsum over dim 0 of a channels-last tensor, tiled over
    // y and x) gains nothing from a wide R0 block but registers: its rows are independent loads a
    // sector apart, and a scan's carry makes R0_BLOCK=1 a plain running total. Its space starts at
    // R0_BLOCK=1, where Inductor's own configs (R0_BLOCK=2 beside XBLOCK=256) live.
    bool walks_r = false;
    for (const ContiguousRun& r : s.contiguous) walks_r = walks_r || r.block == "R0_BLOCK";
    s.strided_reduction = s.kind == "reduction" && s.numel.count("R0") && !s.contiguous.empty() && !walks_r;
    // One pass over the rows, or several (a softmax's statistics, then its outputs): a second pass finds
    // its rows in L2 only while the programs in flight hold less than L2, so there wide x runs cost.
    size_t at = 0;
    for (; (at = k.source.find("for r0_offset in", at)) != std::string::npos; ++at) ++s.row_passes;
  }
  if (why_not) why_not->clear();
  return s;
}

bool config_is_safe(const KernelShape& s, const json& c) {
  if (s.kind == "user_autotune") return user_config_is_safe(s, c);
  for (const std::string& b : s.blocks) {
    if (!c.contains(b)) return false;
    int64_t v = c[b].get<int64_t>(), n = s.numel.at(dim_of(b));
    if (v < 1 || (v & (v - 1)) || v > kMaxBlock.at(dim_of(b))) return false;
    if (b == "R0_BLOCK" && v < s.min_r0_block) return false;
    if (v > next_pow2(n) && v > 1) return false;  // a block past the whole dimension only wastes lanes
    if (!s.masked.at(dim_of(b)) && n % v) return false;
    if ((b == "YBLOCK" || b == "ZBLOCK") && (n + v - 1) / v > kMaxGridYZ) return false;
  }
  int64_t e = elements(s, c), w = c.value("num_warps", 4);
  if (w < 1 || w > 32 || (w & (w - 1))) return false;
  // At most 64 elements per thread per live tensor (register pressure), at least one lane busy per warp.
  if (e > 32 * w * 64 || (e < 32 * w && w > 1)) return false;
  int st = c.value("num_stages", 1);
  return st >= 1 && st <= 4;
}

std::vector<json> config_space(const KernelShape& s, int sm_count) {
  if (s.kind == "user_autotune") {
    // Nearest to the captured launch options first: one coordinate changed, then both.
    std::vector<json> out;
    int64_t w0 = s.base_config.value("num_warps", 4), st0 = s.base_config.value("num_stages", 3);
    for (int w : {1, 2, 4, 8, 16})
      for (int st : {1, 2, 3, 4}) {
        json c = s.base_config;
        c["num_warps"] = w;
        c["num_stages"] = st;
        if ((w != w0 || st != st0) && user_config_is_safe(s, c)) out.push_back(c);
      }
    std::stable_sort(out.begin(), out.end(), [&](const json& a, const json& b) {
      auto d = [&](const json& c) { return (c["num_warps"] != w0) + (c["num_stages"] != st0); };
      return d(a) < d(b);
    });
    return out;
  }
  std::map<std::string, std::vector<int64_t>> values;
  for (const std::string& b : s.blocks) {
    std::string d = dim_of(b);
    int64_t hi = std::min(kMaxBlock.at(d), next_pow2(s.numel.at(d)));
    int64_t lo = d == "R0" ? std::max<int64_t>(s.strided_reduction ? 1 : 16, s.min_r0_block) : 1;
    if (s.kind == "pointwise" && s.blocks.size() == 1) lo = 64;
    values[b] = powers(std::min(lo, hi), hi);
  }
  std::vector<json> out;
  std::vector<int> stage_values = s.launch_stages_matter ? std::vector<int>{1, 2} : std::vector<int>{1};
  // Cartesian product over the block dimensions, then warps and stages.
  std::vector<json> partial = {json::object()};
  for (const std::string& b : s.blocks) {
    std::vector<json> next;
    for (const json& p : partial)
      for (int64_t v : values[b]) {
        json q = p;
        q[b] = v;
        next.push_back(q);
      }
    partial = std::move(next);
  }
  int64_t total = 1;  // elements of the whole problem: tiny problems may use tiny tiles
  for (const auto& [d, n] : s.numel) total *= n;
  for (const json& p : partial) {
    if (elements(s, p) < std::min<int64_t>(128, total)) continue;
    for (int w : {1, 2, 4, 8, 16})
      for (int st : stage_values) {
        json c = p;
        c["num_warps"] = w;
        c["num_stages"] = st;
        if (config_is_safe(s, c)) out.push_back(c);
      }
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](const json& a, const json& b) { return score(s, a, sm_count) < score(s, b, sm_count); });
  return out;
}

std::vector<json> config_neighbours(const KernelShape& s, const json& c) {
  std::vector<json> out;
  std::vector<std::string> keys = s.blocks;
  keys.push_back("num_warps");
  if (s.launch_stages_matter) keys.push_back("num_stages");
  for (const std::string& k : keys)
    for (bool up : {true, false}) {
      json n = c;
      int64_t v = c.value(k, k == "num_stages" ? 1 : 4);
      n[k] = k == "num_stages" ? (up ? v + 1 : v - 1) : (up ? v * 2 : v / 2);
      if (n[k].get<int64_t>() >= 1 && config_is_safe(s, n)) out.push_back(n);
    }
  return out;
}

}  // namespace kopt::agents
