#include "worker/memory.h"

#include <algorithm>
#include <cmath>

#include "worker/client.h"

namespace kopt::worker {

using nlohmann::json;

std::optional<int64_t> bytes_of(const json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(std::string(key));
  if (it == j.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_integer()) {
    // Unsigned values above INT64_MAX are not byte counts any GPU has.
    if (it->is_number_unsigned()) {
      auto u = it->get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? std::optional<int64_t>(static_cast<int64_t>(u)) : std::nullopt;
    }
    auto v = it->get<int64_t>();
    return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  double d = it->get<double>();  // a worker that wrote 1.2e10
  if (!std::isfinite(d) || d < 0 || d >= 9.2e18 || d != std::floor(d)) return std::nullopt;
  return static_cast<int64_t>(d);
}

MemoryReading combine_memory(const std::vector<json>& replies) {
  MemoryReading r;
  r.measured = !replies.empty();
  auto most = [](std::optional<int64_t>& acc, std::optional<int64_t> v) {
    if (v) acc = acc ? std::max(*acc, *v) : *v;
  };
  for (const json& reply : replies) {
    bool ok = reply.is_object() && reply.value("ok", false);
    auto measured = ok ? reply.find("measured") : reply.end();
    r.measured = r.measured && ok && measured != reply.end() && measured->is_boolean() && measured->get<bool>();
    if (!ok) continue;
    most(r.in_use_bytes, bytes_of(reply, "in_use_bytes"));
    most(r.peak_bytes, bytes_of(reply, "peak_bytes"));
    auto where = reply.find("peak_request");
    if (where != reply.end() && where->is_object() && where->value("op", json()).is_string()) {
      auto at = bytes_of(*where, "peak_bytes");
      auto held = bytes_of(r.peak_request, "peak_bytes");
      if (at && (!held || *at > *held)) r.peak_request = {{"op", (*where)["op"]}, {"peak_bytes", *at}};
    }
  }
  // A measured answer without its figure is no measurement.
  if (!r.peak_bytes) r.measured = false;
  return r;
}

MemoryReading read_memory(Supervisor& sup, bool reset_peak, std::chrono::milliseconds timeout) {
  return combine_memory(memory(sup, {.reset_peak = reset_peak}, timeout));
}

std::optional<int64_t> compiled_peak_of(const json& baseline_reply) {
  if (!baseline_reply.is_object() || !baseline_reply.contains("memory")) return std::nullopt;
  return bytes_of(baseline_reply["memory"], "compiled_peak_bytes");
}

json memory_summary(const MemoryReading& r, std::optional<int64_t> compiled_peak) {
  auto opt = [](std::optional<int64_t> v) { return v ? json(*v) : json(nullptr); };
  json ratio = nullptr;
  if (r.peak_bytes && compiled_peak && *compiled_peak > 0)
    ratio = static_cast<double>(*r.peak_bytes) / static_cast<double>(*compiled_peak);
  return {{"measured", r.measured}, {"peak_bytes", opt(r.peak_bytes)}, {"compiled_peak_bytes", opt(compiled_peak)},
          {"ratio", ratio}, {"peak_request", r.peak_request}};
}

}  // namespace kopt::worker
