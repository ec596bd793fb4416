// Starting the worker a command talks to, and the replies every command needs: one slot (the GPU index, or the CPU),
// shutdown on SIGINT/SIGTERM, and start-up failures turned into one line that
// names the fix.
#include "pipeline/workers.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "util/error.h"
#include "util/split.h"
#include "worker/client.h"

namespace kopt::pipeline {

using json_t = nlohmann::json;

std::string python_executable() {
  const char* p = std::getenv("KERNELOPT_PYTHON");
  if (p && *p) return p;
  // Installed into a virtual environment (`pip install .`: VENV/bin/kernelopt), the environment's own
  // Python runs the worker, whether or not the environment is activated: python3 on PATH may be
  // another one, without this kernelopt (or torch).
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path bin = self.parent_path(), py = bin / "python3";
    if (std::filesystem::exists(bin.parent_path() / "pyvenv.cfg", ec) && std::filesystem::exists(py, ec))
      return py.string();
  }
  return "python3";
}

std::unique_ptr<worker::Supervisor> start_worker(const std::string& device, const std::string& gpu) {
  return start_workers(device, {gpu});
}

std::unique_ptr<worker::Supervisor> start_workers(const std::string& device, const std::vector<std::string>& gpus) {
  worker::install_shutdown_handlers();
  worker::SupervisorOptions so;
  so.argv = {python_executable(), "-m", "kernelopt.worker"};
  if (device == "cpu") so.slots = {"cpu"};
  else so.slots = gpus;
  try {
    return std::make_unique<worker::Supervisor>(so);
  } catch (const worker::WorkerStartError& e) {
    std::string why = e.what();
    if (e.replied) throw UserError(why.substr(0, why.find('\n')));  // the worker said why (no GPU, ...), naming the fix
    // A worker that died before its hello: its stderr's last line is the exception (`ModuleNotFoundError: No
    // module named 'torch'`), where the tail's first line is somewhere inside the traceback.
    std::vector<std::string> lines;
    for (const std::string& l : split_list(why, '\n'))
      if (size_t text = l.find_first_not_of(" \t\r"); text != std::string::npos) lines.push_back(l.substr(text));
    if (lines.size() > 1) {
      std::string head = lines.front();
      if (size_t colon = head.find("): "); colon != std::string::npos) head = head.substr(0, colon + 1);
      why = head + ": " + lines.back();
    } else if (!lines.empty()) {
      why = lines.front();
    }
    throw UserError(fmt::format("{}; check that `{} -m kernelopt.worker` runs (set KERNELOPT_PYTHON to a Python "
                                "with torch, triton and kernelopt)",
                                why, python_executable()));
  }
}

void must_ok(const worker::Reply& r, const std::string& what) {
  if (r.ok) return;
  const json_t& reply = r.raw;
  std::string why = reply.value("error", "unknown error");
  why = why.substr(0, why.find('\n'));
  if (reply.contains("failure")) why = reply["failure"].get<std::string>() + ": " + why;
  throw UserError(fmt::format("{} failed: {}", what, why));
}

json_t gpu_ceilings(worker::Supervisor& sup, results::ResultsDb& db, std::chrono::seconds timeout,
                    const std::function<void(const std::string&)>& say) {
  const json_t hello = sup.hellos().at(0);
  std::string gpu = hello["gpu"].value("name", "?"), torch = hello["versions"].value("torch", "?"),
              triton = hello["versions"].value("triton", "?");
  if (auto cached = db.ceilings(gpu, torch, triton)) return *cached;
  say("measuring ceilings (copy bandwidth, matmul rates); cached for this GPU afterwards");
  json_t c = must(worker::ceilings(sup, timeout), "measuring ceilings").raw;
  c.erase("id"), c.erase("ok");
  db.put_ceilings(gpu, torch, triton, c);
  return c;
}

}  // namespace kopt::pipeline
