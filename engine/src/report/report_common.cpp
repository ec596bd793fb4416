// What both renderers share: null-safe access to the report object, text
// cleaning and escaping, number formatting, and write_reports.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report.h"
#include "util/error.h"

namespace kopt::report {

namespace detail {

using nlohmann::json;

const json* field(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(std::string(key));
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> number(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v || !v->is_number()) return std::nullopt;
  double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::string text(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_boolean()) return v->get<bool>() ? "true" : "false";
  if (v->is_number_integer()) return v->dump();
  if (v->is_number()) {
    double d = v->get<double>();
    return std::isfinite(d) ? fmt::format("{}", d) : "";
  }
  return "";
}

std::optional<bool> boolean(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

const json& array(const json& j, std::string_view key) {
  static const json empty = json::array();
  const json* v = field(j, key);
  return v && v->is_array() ? *v : empty;
}

const json& object(const json& j, std::string_view key) {
  static const json empty = json::object();
  const json* v = field(j, key);
  return v && v->is_object() ? *v : empty;
}

bool performance_measured(const json& report) { return boolean(report, "performance_measured").value_or(false); }

std::string clean(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c < 0x80) {
      out.push_back(c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c));
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF), else U+FFFD for one byte.
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    bool ok = len > 0 && i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
    for (size_t k = 2; ok && k < len; ++k) ok = p[i + k] >= 0x80 && p[i + k] <= 0xBF;
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (c == 0xC2 && p[i + 1] <= 0x9F) out.push_back(' ');  // C1 control characters
    else out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string escape_html(std::string_view s) {
  std::string c = clean(s), out;
  out.reserve(c.size() + c.size() / 8);
  for (char ch : c) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(ch);
    }
  }
  return out;
}

std::string format_ms(std::optional<double> ms) {
  if (!ms) return kDash;
  double v = *ms, a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 0.01) return fmt::format("{:.3f}", v);
  // Small times: three significant digits (0.00412), at most 6 decimals.
  int decimals = std::min(6, 2 - static_cast<int>(std::floor(std::log10(a))));
  return fmt::format("{:.{}f}", v, decimals);
}

std::string format_seconds(std::optional<double> s) {
  if (!s) return kDash;
  return std::fabs(*s) >= 10 ? fmt::format("{:.1f} s", *s) : fmt::format("{:.2f} s", *s);
}

std::string format_speedup(std::optional<double> x) {
  if (!x) return kDash;
  return fmt::format("{:.2f}×", *x);
}

namespace {

std::string decimal_units(double v, const char* unit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  double a = std::fabs(v);
  if (a < 1000) return fmt::format("{:.0f} {}", v, unit);
  int p = 0;
  while (a >= 1000 && p < 6) a /= 1000, v /= 1000, ++p;
  return fmt::format("{:.1f} {}{}", v, prefixes[p], unit);
}

}  // namespace

std::string format_bytes(std::optional<double> b) { return b ? decimal_units(*b, "B") : kDash; }
std::string format_flops(std::optional<double> f) { return f ? decimal_units(*f, "FLOP") : kDash; }

std::string format_matmul_flops(std::optional<double> f) {
  return f && *f > 0 ? format_flops(f) : f ? "none counted (no tl.dot)" : std::string(kDash);
}

std::string format_share(std::optional<double> share) {
  return share ? fmt::format("{:.0f}%", *share * 100) : std::string(kDash);
}

std::string format_mem(std::optional<double> b) {
  if (!b) return kDash;
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = *b;
  size_t u = 0;
  while (std::fabs(v) >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", v) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string memory_line(const json& r) {
  const json& m = object(r, "memory");
  if (m.empty()) return "";  // a report from before the figure existed
  auto peak = number(m, "peak_bytes"), compiled = number(m, "compiled_peak_bytes"), ratio = number(m, "ratio");
  std::string figure = format_mem(peak);
  if (ratio)
    figure += fmt::format(", {:.2f}x torch.compile's own peak for one call of the model ({})", *ratio,
                          format_mem(compiled));
  else if (compiled)
    figure += fmt::format(" (torch.compile's own peak for one call of the model: {})", format_mem(compiled));
  if (boolean(m, "measured") == true && peak) return "Peak device memory: " + figure;
  // In CPU mode a worker may still count what it allocated: shown, but never as a device figure.
  bool cpu = text(r, "device") == "cpu" || !performance_measured(r);
  if (!cpu) return "Peak device memory: not measured (the worker did not report it)";
  std::string s = "Peak device memory: not measured (CPU mode)";
  if (peak) s += "; the CPU worker's own accounting, not device memory: " + figure;
  return s;
}

std::string format_count(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v || !v->is_number()) return kDash;
  if (v->is_number_integer()) return v->dump();
  double d = v->get<double>();
  if (!std::isfinite(d)) return kDash;
  if (d == std::floor(d) && std::fabs(d) < 1e15) return fmt::format("{:.0f}", d);
  return fmt::format("{}", d);
}

std::string format_above_floor(std::optional<double> ms, std::optional<double> floor_ms) {
  if (!ms || !floor_ms || *floor_ms <= 0) return kDash;
  return fmt::format("{:.2f}×", *ms / *floor_ms);
}

std::string status_words(std::string_view status) {
  if (status == "not_measured") return "not measured";
  if (status.empty()) return kDash;
  return std::string(status);
}

std::string outcome_words(const json& candidate) {
  std::string o = text(candidate, "outcome"), gate = text(candidate, "failed_gate");
  if (o == "rejected") return gate.empty() ? "rejected" : "rejected at " + gate;
  if (o == "screened_out") return "screened out";
  if (o == "not_run") return "not run";
  if (o.empty()) return kDash;
  return o;
}

std::optional<double> after_ms(const json& kernel) {
  if (auto o = number(kernel, "optimized_ms")) return o;
  if (boolean(kernel, "accepted") != true) return number(kernel, "baseline_ms");
  return std::nullopt;
}

std::string versions_line(const json& report) {
  const json& v = object(report, "versions");
  std::vector<std::string> parts;
  auto add = [&](const std::string& key) {
    std::string t = text(v, key);
    if (!t.empty()) parts.push_back(key + " " + t);
  };
  for (const char* k : {"torch", "triton", "cuda"}) add(k);
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "torch" && it.key() != "triton" && it.key() != "cuda") add(it.key());
  return parts.empty() ? kDash : fmt::format("{}", fmt::join(parts, " · "));
}

std::string ceilings_line(const json& report) {
  const json* c = field(report, "ceilings");
  if (!c || !c->is_object()) return kDash;
  struct Known {
    const char *key, *label, *unit;
    int decimals;
  };
  static const Known known[] = {{"copy_tbps", "copy", "TB/s", 2},
                                {"fp32_tflops", "fp32", "TFLOP/s", 1},
                                {"tf32_tflops", "tf32", "TFLOP/s", 1},
                                {"bf16_tflops", "bf16", "TFLOP/s", 1},
                                {"fp16_tflops", "fp16", "TFLOP/s", 1}};
  std::vector<std::string> parts;
  for (const Known& k : known)
    if (auto v = number(*c, k.key)) parts.push_back(fmt::format("{} {:.{}f} {}", k.label, *v, k.decimals, k.unit));
  for (auto it = c->begin(); it != c->end(); ++it) {
    bool is_known = false;
    for (const Known& k : known) is_known |= it.key() == k.key;
    if (!is_known)
      if (auto v = number(*c, it.key())) parts.push_back(fmt::format("{} {}", it.key(), *v));
  }
  return parts.empty() ? kDash : fmt::format("{}", fmt::join(parts, " · "));
}

std::string summary_line(const json& report) {
  const json& s = object(report, "summary");
  if (s.empty()) return kDash;
  auto counted = [&](const char* key, const char* one, const char* many) {
    std::string n = format_count(s, key);
    return n + " " + (n == "1" ? one : many);
  };
  std::string line = fmt::format("{}, {} accepted, {}", counted("kernels", "kernel", "kernels"),
                                 format_count(s, "accepted"), counted("candidates", "candidate", "candidates"));
  const json& r = object(s, "rejected_at");
  std::vector<std::string> parts;
  for (auto it = r.begin(); it != r.end(); ++it) parts.push_back(it.key() + " " + format_count(r, it.key()));
  if (!parts.empty()) line += fmt::format("; rejected at {}", fmt::join(parts, " · "));
  if (auto n = number(s, "regions_fused"); n && *n > 0)
    line += fmt::format("; {}", counted("regions_fused", "region fused", "regions fused"));
  return line;
}

namespace {

// A JSON value as a Python literal: 'text', True/False/None, [..], {'k': v}, numbers as JSON writes them.
std::string py_literal(const json& v) {
  if (v.is_string()) {
    std::string out = "'";
    for (char c : v.get<std::string>()) out += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return out + "'";
  }
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_array()) {
    std::vector<std::string> items;
    for (const json& x : v) items.push_back(py_literal(x));
    return "[" + fmt::format("{}", fmt::join(items, ", ")) + "]";
  }
  if (v.is_object()) {
    std::vector<std::string> items;
    for (const auto& [k, x] : v.items()) items.push_back("'" + k + "': " + py_literal(x));
    return "{" + fmt::format("{}", fmt::join(items, ", ")) + "}";
  }
  return v.dump();
}

bool launch_option(const std::string& key) {
  return key == "num_warps" || key == "num_stages" || key == "num_ctas" || key == "maxnreg";
}

}  // namespace

std::string winning_config(const json& k) {
  if (text(k, "kind") != "user_autotune" || boolean(k, "accepted") != true) return "";
  std::string chosen = text(k, "chosen");
  const json* cfg = nullptr;
  for (const json& c : array(k, "candidates"))
    if (!chosen.empty() && text(c, "id") == chosen && c.contains("config") && c["config"].is_object()) cfg = &c["config"];
  if (!cfg) return "";
  if (const json& helion = object(k, "helion_config"); !helion.empty()) {
    // Helion bakes its block sizes into the generated kernel: the search varies the launch options only, and
    // a winner that set anything else has no spelling in helion.Config.
    json merged = helion;
    for (const auto& [key, v] : cfg->items()) {
      if (!launch_option(key)) return "";
      merged[key] = v;
    }
    std::vector<std::string> args;
    for (const auto& [key, v] : merged.items()) args.push_back(key + "=" + py_literal(v));
    return "helion.Config(" + fmt::format("{}", fmt::join(args, ", ")) + ")";
  }
  std::vector<std::string> meta, opts;
  for (const auto& [key, v] : cfg->items()) {
    if (launch_option(key)) opts.push_back(key + "=" + py_literal(v));
    else meta.push_back("'" + key + "': " + py_literal(v));
  }
  std::string s = "triton.Config({" + fmt::format("{}", fmt::join(meta, ", ")) + "}";
  for (const std::string& o : opts) s += ", " + o;
  return s + ")";
}

}  // namespace detail

namespace {

// Written whole to a temporary name, then renamed: a killed run never leaves half a report.
void write_file(const std::filesystem::path& path, const std::string& bytes) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("cannot write {}: {}; choose a writable output directory", tmp.string(), std::strerror(errno)));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw UserError(fmt::format("cannot write {} (disk full?); free space or choose another output directory", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw UserError(fmt::format("cannot write {}: {}; choose a writable output directory", path.string(), ec.message()));
}

}  // namespace

void detail::write_file_atomic(const std::filesystem::path& path, const std::string& bytes) { write_file(path, bytes); }

void write_reports(const nlohmann::json& report, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UserError(fmt::format("cannot create the report directory {}: {}; choose a writable output directory", dir.string(), ec.message()));
  // Invalid UTF-8 in a string (e.g. captured error text) becomes U+FFFD rather than an exception.
  write_file(dir / "report.json", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_file(dir / "report.md", render_markdown(report));
  write_file(dir / "report.html", render_html(report));
}

}  // namespace kopt::report
