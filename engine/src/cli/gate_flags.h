// The gate flags `kernelopt verify` and `kernelopt optimize` share, registered by one function with
// their defaults read from verify::CascadeOptions (verify/cascade.h holds each default once) and their
// ranges checked when parsed (cli/flags.h).
#pragma once

#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

#include "verify/cascade.h"

namespace kopt::cli {

// Which gate flags a subcommand offers besides --seeds, --gamma and the four tolerances.
struct GateFlagSet {
  bool reps = false;  // --reps (verify; optimize's search times with its own counts)
};

// Registers, in this order, --seeds, --gamma, [--reps], --atol-fp32, --rtol-fp32, --atol-half,
// --rtol-half on `sub`, bound to `gate`'s fields and showing their current values as defaults.
void add_gate_flags(CLI::App& sub, verify::CascadeOptions& gate, GateFlagSet set = {});

// A whole number of seconds, 1 or more, bound to `seconds` (its current value is the default shown).
CLI::Option* add_seconds_option(CLI::App& sub, const std::string& name, std::chrono::seconds& seconds,
                                const std::string& description);

}  // namespace kopt::cli
