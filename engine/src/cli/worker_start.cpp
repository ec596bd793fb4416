// Starting the worker a command talks to: one slot (the GPU index, or the CPU),
// shutdown on SIGINT/SIGTERM, and start-up failures turned into one line that
// names the fix.
#include <fmt/format.h>

#include "cli/commands.h"
#include "util/error.h"

namespace kopt::cli {

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
    why = why.substr(0, why.find('\n'));
    if (e.replied) throw UserError(why);  // the worker said why (no GPU, ...), naming the fix
    throw UserError(fmt::format("{}; check that `{} -m kernelopt.worker` runs (set KERNELOPT_PYTHON to a Python "
                                "with torch, triton and kernelopt)",
                                why, python_executable()));
  }
}

}  // namespace kopt::cli
