#include "profile/roofline.h"

#include <algorithm>
#include <map>
#include <set>

#include "profile/access.h"
#include "verify/outputs.h"

namespace kopt::profile {

using nlohmann::json;

size_t dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8}, {"int32", 4},
      {"int16", 2},   {"int8", 1},    {"uint8", 1},   {"bool", 1},     {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
      {"complex64", 8}, {"uint32", 4}, {"uint64", 8}, {"uint16", 2}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::string pointee_dtype(const std::string& ptr) {
  static const std::map<std::string, std::string> names = {
      {"*fp64", "float64"}, {"*fp32", "float32"}, {"*fp16", "float16"}, {"*bf16", "bfloat16"}, {"*i64", "int64"},
      {"*i32", "int32"},   {"*i16", "int16"},     {"*i8", "int8"},       {"*u8", "uint8"},      {"*i1", "bool"}};
  auto it = names.find(ptr);
  return it == names.end() ? "" : it->second;
}

uint64_t tensor_bytes(const json& arg) {
  if (!arg.contains("shape")) return 0;
  uint64_t numel = 1, span = 1;
  const json& shape = arg["shape"];
  const json stride = arg.value("stride", json::array());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d].get<int64_t>();
    if (n <= 0) return 0;
    numel *= static_cast<uint64_t>(n);
    int64_t s = d < stride.size() ? stride[d].get<int64_t>() : 1;
    span += static_cast<uint64_t>(n - 1) * static_cast<uint64_t>(std::max<int64_t>(s, 0));
  }
  return std::min(numel, span) * dtype_size(arg.value("dtype", ""));
}

namespace {

std::vector<int64_t> shape_of(const json& arg) {
  std::vector<int64_t> s;
  for (const json& d : arg.value("shape", json::array())) s.push_back(d.get<int64_t>());
  return s;
}

// The matmul rate a kernel's dots run at: the inputs' dtype; fp32 counts as tf32 unless the
// source asks for IEEE fp32 (a higher rate gives a lower floor: the floor stays a lower bound).
std::string rate_of(const std::string& dtype, const std::string& source) {
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float16") return "fp16";
  bool ieee = false;
  for (const char* says : {"\"ieee\"", "'ieee'", "allow_tf32=False", "ALLOW_TF32 : tl.constexpr = False",
                           "'ALLOW_TF32': False"})
    ieee = ieee || source.find(says) != std::string::npos;
  return ieee ? "fp32" : "tf32";
}

}  // namespace

std::optional<uint64_t> gemm_flops(const json& args, const std::vector<bool>& written) {
  if (written.size() != args.size()) return std::nullopt;
  for (size_t o = 0; o < args.size(); ++o) {
    std::vector<int64_t> out = shape_of(args[o]);
    if (!written[o] || out.size() < 2) continue;
    int64_t m = out[out.size() - 2], n = out.back();
    uint64_t batch = 1;
    for (size_t d = 0; d + 2 < out.size(); ++d) batch *= static_cast<uint64_t>(std::max<int64_t>(out[d], 1));
    for (size_t a = 0; a < args.size(); ++a) {
      std::vector<int64_t> sa = shape_of(args[a]);
      if (a == o || written[a] || sa.size() < 2) continue;  // operands are read-only arguments
      int64_t a0 = sa[sa.size() - 2], a1 = sa.back();
      for (size_t b = 0; b < args.size(); ++b) {
        std::vector<int64_t> sb = shape_of(args[b]);
        if (b == o || b == a || written[b] || sb.size() < 2) continue;
        int64_t b0 = sb[sb.size() - 2], b1 = sb.back();
        // A is [M, K] or [K, M]; B is [K, N] or [N, K]; the K's must agree.
        for (int64_t ka : {a0 == m ? a1 : -1, a1 == m ? a0 : -1})
          for (int64_t kb : {b1 == n ? b0 : -1, b0 == n ? b1 : -1})
            if (ka > 0 && ka == kb)
              return 2 * batch * static_cast<uint64_t>(m) * static_cast<uint64_t>(n) * static_cast<uint64_t>(ka);
      }
    }
  }
  return std::nullopt;
}

Cost launch_cost(const ir::Kernel& k, const json& launch) {
  Cost c;
  // Bytes from what the source loads and stores: a pure output is written, a stored pointer that is
  // also loaded is read and written, anything else is read. (Inductor's mutated_arg_names is not
  // used: it can name an in_out pointer the kernel only reads, which counted a write of the whole
  // tensor — the depthwise BN/hardswish kernel of level 2 then ran at 0.7x its "floor".)
  verify::PointerWrites w = verify::pointer_writes(k);
  std::set<size_t> written(w.pure.begin(), w.pure.end()), stores(w.stored.begin(), w.stored.end());
  const json args = launch.value("args", json::array());
  std::vector<bool> writes(args.size(), false);
  // The kernel's source parsed once for every argument's touched elements (none where it does not parse:
  // each argument's storage counts).
  std::optional<ir::KernelSource> parsed;
  try {
    parsed = ir::parse_kernel_source(k.source, k.name, k.name);
  } catch (const std::exception&) {
    parsed.reset();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    uint64_t b = tensor_bytes(args[i]);
    if (!b) continue;
    bool in_place = stores.count(i) && !written.count(i);
    // Only what the loads (or a pure output's stores) can touch: a kernel reading two thirds of a fused
    // projection's output counted the whole of it, a "floor" above the kernel's own time (access.h).
    if (!in_place && parsed)
      if (auto n = touched_elements(k, *parsed, i, launch, written.count(i) > 0))
        b = std::min(b, *n * dtype_size(args[i].value("dtype", "")));
    writes[i] = written.count(i) || in_place;
    if (written.count(i)) c.bytes_written += b;
    else if (in_place) c.bytes_read += b, c.bytes_written += b;
    else c.bytes_read += b;
  }
  // Without tl.dot a Triton kernel does a few arithmetic ops per element: memory-bound, FLOPs not
  // counted. With it, the matrix products' FLOPs from the shapes, or no floor at all if the shapes do
  // not say (a 33x "above floor" from bytes alone would send the search after nothing).
  if (k.source.find("tl.dot(") == std::string::npos) return c;
  std::optional<uint64_t> f = gemm_flops(args, writes);
  c.flops_known = f.has_value();
  if (f) {
    c.flops = *f;
    for (size_t i = 0; i < args.size(); ++i)
      if (!writes[i] && shape_of(args[i]).size() >= 2) {
        c.flops_rate = rate_of(args[i].value("dtype", ""), k.source);
        break;
      }
  }
  return c;
}

namespace {

// FLOPs per second for the cost's rate. tf32 when the worker did not measure it: the bf16 rate (the
// hardware's tf32 rate is at most that), so the floor stays a lower bound.
std::optional<double> flops_rate(const Cost& c, const json& ceilings) {
  const json rates = ceilings.value("matmul_flops_per_s", json::object());
  double r = rates.value(c.flops_rate, 0.0);
  if (r <= 0 && c.flops_rate == "tf32") r = rates.value("bf16", 0.0);
  if (r <= 0) return std::nullopt;
  return r;
}

}  // namespace

std::optional<double> floor_ms(const Cost& c, const json& ceilings) {
  if (!c.flops_known || !ceilings.is_object()) return std::nullopt;
  double bw = ceilings.value("copy_bytes_per_s", 0.0);
  if (bw <= 0) return std::nullopt;
  double ms = static_cast<double>(c.bytes()) / bw * 1e3;
  if (c.flops == 0) return ms;
  std::optional<double> r = flops_rate(c, ceilings);
  if (!r) return std::nullopt;
  return std::max(ms, static_cast<double>(c.flops) / *r * 1e3);
}

std::string bottleneck(const Cost& c, const std::optional<json>& ceilings) {
  if (!c.flops_known) return "unknown";
  if (c.flops == 0) return "memory";
  if (!ceilings) return "compute";
  double bw = ceilings->value("copy_bytes_per_s", 0.0);
  std::optional<double> r = flops_rate(c, *ceilings);
  if (bw <= 0 || !r) return "unknown";
  return static_cast<double>(c.flops) / *r > static_cast<double>(c.bytes()) / bw ? "compute" : "memory";
}

}  // namespace kopt::profile
