#include "worker/client.h"

namespace kopt::worker {

using nlohmann::json;

namespace {

json kernel_request(std::string_view op, const KernelAt& at) {
  return {{"op", std::string(op)}, {"bundle", at.bundle}, {"graph", at.graph}, {"kernel", at.kernel}};
}

}  // namespace

json RunKernelRequest::to_json() const {
  json j = kernel_request("run_kernel", at);
  j["launch"] = launch;
  j["source"] = source;
  j["poison"] = poison;
  j["poison_fill"] = poison_fill;
  j["tolerances"] = tolerances;
  if (seed) j["seed"] = *seed;
  if (inputs != "matched") j["inputs"] = inputs;
  if (repeat) j["repeat"] = true;
  if (!scratch.empty()) j["scratch"] = scratch;
  if (!config.is_null()) j["config"] = config;
  return j;
}

json RunRegionRequest::to_json() const {
  json j = bundle_request("run_region", bundle);
  j["graph"] = graph;
  j["source"] = source;
  j["original"] = original;
  j["candidate"] = candidate;
  j["bindings"] = json::array();
  for (const RegionBinding& b : bindings)
    j["bindings"].push_back({{"name", b.name}, {"kernel", b.kernel}, {"launch", b.launch}, {"arg", b.arg}});
  j["outputs"] = outputs;
  j["poison_fill"] = poison_fill;
  j["tolerances"] = tolerances;
  if (seed) j["seed"] = *seed;
  if (inputs != "matched") j["inputs"] = inputs;
  if (repeat) j["repeat"] = true;
  return j;
}

json CompileKernelRequest::to_json() const {
  json j = kernel_request("compile_kernel", at);
  j["launch"] = 0;
  j["source"] = source;
  return j;
}

json TimeKernelRequest::to_json() const {
  json j = kernel_request("time_kernel", at);
  j["source"] = source;
  j["reps"] = reps;
  j["poison"] = poison;
  return j;
}

json ScreenRequest::to_json() const {
  json j = kernel_request("screen", at);
  j["sources"] = sources;
  j["reps"] = reps;
  j["poison"] = poison;
  if (compile_limit_s) j["compile_limit_s"] = *compile_limit_s;
  return j;
}

json RunModuleRequest::to_json() const {
  json j = {{"op", "run_module"}, {"bundle", bundle}, {"tolerances", tolerances}};
  if (sources) j["sources"] = *sources;
  if (source) j["source"] = *source, j["graph"] = graph;
  if (fp64) j["fp64"] = true;
  return j;
}

json TimeModuleRequest::to_json() const {
  return {{"op", "time_module"}, {"bundle", bundle}, {"sources", sources}, {"reps", reps}};
}

json ProfileRequest::to_json() const { return {{"op", "profile"}, {"bundle", bundle}, {"reps", reps}}; }

json BenchTimesRequest::to_json() const {
  json j = {{"op", "bench_times"}, {"bundle", bundle}, {"reps", reps}};
  if (sources) j["sources"] = *sources;
  return j;
}

json MemoryRequest::to_json() const { return {{"op", "memory"}, {"reset_peak", reset_peak}}; }

json bundle_request(std::string_view op, const std::string& bundle) { return {{"op", std::string(op)}, {"bundle", bundle}}; }

Reply load_bundle(Supervisor& sup, const std::string& bundle, Timeout t) {
  return parse_reply(sup.call(bundle_request("load_bundle", bundle), t));
}
RunBaselineReply run_baseline(Supervisor& sup, const std::string& bundle, Timeout t) {
  return parse_run_baseline(sup.call(bundle_request("run_baseline", bundle), t));
}
RunFp64Reply run_fp64(Supervisor& sup, const std::string& bundle, Timeout t, bool defer_host) {
  json j = bundle_request("run_fp64", bundle);
  if (defer_host) j["defer_host"] = true;
  return parse_run_fp64(sup.call(std::move(j), t));
}
Reply capture(Supervisor& sup, const nlohmann::json& req, Timeout t) {
  nlohmann::json r = req;
  r["op"] = "capture";
  return parse_reply(sup.call(std::move(r), t));
}
RecordLaunchesReply record_launches(Supervisor& sup, const std::string& bundle, Timeout t) {
  return parse_record_launches(sup.call(bundle_request("record_launches", bundle), t));
}
Reply ceilings(Supervisor& sup, Timeout t) { return parse_reply(sup.call({{"op", "ceilings"}}, t)); }
Reply forget_bundles(Supervisor& sup, Timeout t) { return parse_reply(sup.call({{"op", "forget_bundles"}}, t)); }
ProfileReply profile(Supervisor& sup, const ProfileRequest& r, Timeout t) {
  return parse_profile(sup.call(r.to_json(), t));
}
RunKernelReply run_kernel(Supervisor& sup, const RunKernelRequest& r, Timeout t) {
  return parse_run_kernel(sup.call(r.to_json(), t));
}
RunKernelReply run_region(Supervisor& sup, const RunRegionRequest& r, Timeout t) {
  return parse_run_kernel(sup.call(r.to_json(), t));
}
CompileKernelReply compile_kernel(Supervisor& sup, const CompileKernelRequest& r, Timeout t) {
  return parse_compile_kernel(sup.call(r.to_json(), t));
}
TimedReply time_kernel(Supervisor& sup, const TimeKernelRequest& r, Timeout t) {
  return parse_time_kernel(sup.call(r.to_json(), t));
}
ScreenReply screen(Supervisor& sup, const ScreenRequest& r, Timeout t) { return parse_screen(sup.call(r.to_json(), t)); }
RunModuleReply run_module(Supervisor& sup, const RunModuleRequest& r, Timeout t) {
  return parse_run_module(sup.call(r.to_json(), t), r.fp64);
}
TimedReply time_module(Supervisor& sup, const TimeModuleRequest& r, Timeout t) {
  return parse_time_module(sup.call(r.to_json(), t));
}
BenchTimesReply bench_times(Supervisor& sup, const BenchTimesRequest& r, Timeout t) {
  return parse_bench_times(sup.call(r.to_json(), t));
}
std::vector<json> memory(Supervisor& sup, const MemoryRequest& r, Timeout t) { return sup.call_each(r.to_json(), t); }

}  // namespace kopt::worker
