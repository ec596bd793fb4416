// Starting the workers a job or a command talks to, and the replies every one of them needs.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/db.h"
#include "worker/replies.h"
#include "worker/supervisor.h"

namespace kopt::pipeline {

// The Python interpreter that runs the worker: $KERNELOPT_PYTHON; else, for a binary installed in a virtual
// environment's bin/ (a pyvenv.cfg beside it), that environment's python3; else python3 on PATH.
std::string python_executable();

// One worker for `device` ("cuda" on GPU `gpu`, or "cpu"); start-up failures are UserErrors.
std::unique_ptr<worker::Supervisor> start_worker(const std::string& device, const std::string& gpu);
// One worker per GPU in `gpus` ("0,1,3"), or one CPU worker.
std::unique_ptr<worker::Supervisor> start_workers(const std::string& device, const std::vector<std::string>& gpus);

// A worker reply the command cannot do without: returned when ok, otherwise a one-line
// UserError naming what failed and why.
void must_ok(const worker::Reply& reply, const std::string& what);
template <class R>
R must(R reply, const std::string& what) {
  must_ok(reply, what);
  return reply;
}

// The measured ceilings of the worker's GPU, from the results database when this GPU model and
// these versions were measured before, else measured now (`say` announces it) and stored.
nlohmann::json gpu_ceilings(worker::Supervisor& sup, results::ResultsDb& db, std::chrono::seconds timeout,
                            const std::function<void(const std::string&)>& say);

}  // namespace kopt::pipeline
