#include "worker/replies.h"

#include <fmt/format.h>

namespace kopt::worker {

using nlohmann::json;

namespace {

// Reads one reply's fields; every error names the op and the field (its path inside the reply).
class Fields {
 public:
  Fields(const json& j, std::string_view op, std::string prefix = "") : j_(j), op_(op), prefix_(std::move(prefix)) {}

  const json& object(std::string_view key) const { return typed(key, &json::is_object, "an object"); }
  const json& array(std::string_view key) const { return typed(key, &json::is_array, "an array"); }
  bool boolean(std::string_view key) const { return typed(key, &json::is_boolean, "a boolean").get<bool>(); }
  // Any number: an integral 0 is a valid time.
  double number(std::string_view key) const { return typed(key, &json::is_number, "a number").get<double>(); }
  Fields at(std::string_view key) const { return {object(key), op_, prefix_ + std::string(key) + "."}; }

  // Absent fields: nullopt (or `fallback`); present ones must have the type.
  std::optional<bool> opt_boolean(std::string_view key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong(key, *v, "a boolean");
    return v->get<bool>();
  }
  bool boolean(std::string_view key, bool fallback) const { return opt_boolean(key).value_or(fallback); }
  double number(std::string_view key, double fallback) const { return find(key) ? number(key) : fallback; }
  std::optional<std::string> opt_string(std::string_view key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong(key, *v, "a string");
    return v->get<std::string>();
  }
  // An object that may be absent: `fallback` then.
  json opt_object(std::string_view key, json fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_object()) wrong(key, *v, "an object");
    return *v;
  }
  const json& whole() const { return j_; }
  // Element `i` of the array at `key`, which must be an object.
  Fields item(std::string_view key, const json& list, size_t i) const {
    std::string path = fmt::format("{}[{}]", key, i);
    if (!list[i].is_object()) wrong(path, list[i], "an object");
    return {list[i], op_, prefix_ + path + "."};
  }

 private:
  const json* find(std::string_view key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& typed(std::string_view key, bool (json::*is)() const noexcept, const char* expected) const {
    const json* v = find(key);
    if (!v) throw ReplyError(fmt::format("the worker's {} reply lacks '{}{}'", op_, prefix_, key));
    if (!(v->*is)()) wrong(key, *v, expected);
    return *v;
  }
  [[noreturn]] void wrong(std::string_view key, const json& v, const char* expected) const {
    throw ReplyError(
        fmt::format("the worker's {} reply has '{}{}' as {}, not {}", op_, prefix_, key, v.type_name(), expected));
  }

  const json& j_;
  std::string_view op_;
  std::string prefix_;
};

// The common part: `ok`, and the reply kept.
template <class R>
R start(json raw) {
  R r;
  static_cast<Reply&>(r) = parse_reply(std::move(raw));
  return r;
}

Timing timing(const Fields& f) {
  Timing t;
  t.raw = f.whole();
  t.median_ms = f.number("median_ms");
  t.p20_ms = f.number("p20_ms");
  t.p80_ms = f.number("p80_ms");
  t.synced_median_ms = f.at("synced").number("median_ms");
  return t;
}

TimedReply timed(json raw, std::string_view op, std::string_view candidate) {
  auto r = start<TimedReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, op);
  r.measured = f.boolean("measured", false);
  r.reason = f.opt_string("reason");
  if (!r.measured) return r;
  r.baseline = timing(f.at("baseline"));
  r.candidate = timing(f.at(candidate));
  return r;
}

}  // namespace

Timing parse_timing(json raw, std::string_view op) { return timing(Fields(raw, op)); }

Reply parse_reply(json raw) {
  Reply r;
  r.ok = raw.is_object() && raw.value("ok", false);
  r.raw = std::move(raw);
  return r;
}

RunKernelReply parse_run_kernel(json raw) {
  auto r = start<RunKernelReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "run_kernel");
  r.match = f.boolean("match");
  r.rounding_only = f.boolean("rounding_only", false);
  r.deterministic = f.opt_boolean("deterministic");
  r.comparison = f.object("comparison");
  return r;
}

RunModuleReply parse_run_module(json raw, bool fp64) {
  auto r = start<RunModuleReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "run_module");
  r.vs_baseline = f.object("vs_baseline");
  r.vs_eager = f.opt_object("vs_eager", json::object());
  r.baseline_self = f.opt_object("baseline_self", nullptr);
  if (fp64) {
    r.candidate_vs_fp64 = f.object("candidate_vs_fp64");
    r.baseline_vs_fp64 = f.object("baseline_vs_fp64");
  }
  return r;
}

TimedReply parse_time_kernel(json raw) { return timed(std::move(raw), "time_kernel", "candidate"); }
TimedReply parse_time_module(json raw) { return timed(std::move(raw), "time_module", "optimized"); }

BenchTimesReply parse_bench_times(json raw) {
  auto r = start<BenchTimesReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "bench_times");
  r.measured = f.boolean("measured", false);
  if (!r.measured) return r;
  r.eager = f.object("eager");
  r.compiled = f.object("compiled");
  r.optimized = f.opt_object("optimized", nullptr);
  return r;
}

CompileKernelReply parse_compile_kernel(json raw) {
  auto r = start<CompileKernelReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "compile_kernel");
  r.compiled = f.boolean("compiled", false);
  r.error = f.opt_string("error");
  r.how = f.opt_string("how").value_or("");
  return r;
}

RecordLaunchesReply parse_record_launches(json raw) {
  auto r = start<RecordLaunchesReply>(std::move(raw));
  if (!r.ok) return r;
  r.launches = Fields(r.raw, "record_launches").array("launches");
  return r;
}

RunBaselineReply parse_run_baseline(json raw) {
  auto r = start<RunBaselineReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "run_baseline");
  r.match = f.boolean("match");
  r.seconds = f.opt_object("seconds", nullptr);
  return r;
}

RunFp64Reply parse_run_fp64(json raw) {
  auto r = start<RunFp64Reply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "run_fp64");
  if (auto why = f.opt_string("deferred")) {
    r.deferred = *why;
    return r;
  }
  r.baseline_vs_fp64 = f.object("baseline_vs_fp64");
  return r;
}

ProfileReply parse_profile(json raw) {
  auto r = start<ProfileReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "profile");
  // A CPU worker answers measured=false and no kernels.
  if (!r.raw.contains("kernels")) return r;
  const json& kernels = f.array("kernels");
  for (size_t i = 0; i < kernels.size(); ++i) {
    Fields k = f.item("kernels", kernels, i);
    r.kernels.push_back({k.opt_string("name").value_or(""), k.number("ms_per_run", 0.0), k.number("calls_per_run", 0.0)});
  }
  return r;
}

ScreenReply parse_screen(json raw) {
  auto r = start<ScreenReply>(std::move(raw));
  if (!r.ok) return r;
  Fields f(r.raw, "screen");
  r.baseline_median_ms = f.at("baseline").number("median_ms");
  const json& cands = f.array("candidates");
  for (size_t i = 0; i < cands.size(); ++i) {
    Fields c = f.item("candidates", cands, i);
    ScreenedCandidate s;
    s.ok = c.boolean("ok", false);
    if (s.ok) s.median_ms = c.number("median_ms");
    else s.error = c.opt_string("error").value_or("?");
    r.candidates.push_back(std::move(s));
  }
  if (r.raw.contains("seconds")) {
    Fields sec = f.at("seconds");
    r.compile_s = sec.number("compile", 0.0);
    r.run_s = sec.number("run", 0.0);
  }
  r.parallel_compile = f.boolean("parallel_compile", false);
  return r;
}

}  // namespace kopt::worker
