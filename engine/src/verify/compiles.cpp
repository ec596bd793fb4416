#include "verify/compiles.h"

#include <fmt/format.h>

#include "verify/rules.h"
#include "worker/client.h"

namespace kopt::verify {

using nlohmann::json;

namespace {

std::string failure_message(const worker::Reply& r, const std::string& during) {
  json e = reply_evidence(r);
  std::string msg = fmt::format("{}: {}", during, e.value("error", ""));
  if (e.contains("failure")) msg += fmt::format(" ({}; worker replaced)", e["failure"].get<std::string>());
  return msg;
}

}  // namespace

Finding check_compiles(worker::Supervisor& sup, const std::string& bundle, size_t graph, const ir::Kernel& k,
                       const std::string& source, const CascadeOptions& o) {
  // The baseline first, under its own limit: the candidate's timeout is for the candidate's code.
  worker::RecordLaunchesReply loaded = worker::record_launches(sup, bundle, o.load_timeout);
  if (failed_reply(loaded))
    return {"compiles", false, failure_message(loaded, "the baseline did not load, so nothing could be compiled")};
  worker::CompileKernelReply r = worker::compile_kernel(sup, {.at = {bundle, graph, k.name}, .source = source}, o.timeout);
  if (failed_reply(r)) return {"compiles", false, failure_message(r, "compiling the candidate failed")};
  if (!r.compiled) return {"compiles", false, "Triton rejects the candidate: " + r.error.value_or("(no error text)")};
  return {"compiles", true, r.how};
}

}  // namespace kopt::verify
