// What became of a candidate in a kernel's search. Its text is what report.json's candidates and the
// LLM summary carry (docs/report.md): to_string writes it, parse_outcome reads one back.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace kopt::search {

enum class Outcome {
  not_run,       // proposed, never verified: the budget ran out first
  screened_out,  // the screen saw it no faster than the margin G4 demands
  accepted,      // passed every gate
  rejected,      // failed a gate
};

std::string_view to_string(Outcome o);
std::optional<Outcome> parse_outcome(std::string_view text);
// An outcome in JSON is its text (found by argument-dependent lookup; without it nlohmann would write the number).
void to_json(nlohmann::json& j, Outcome o);

}  // namespace kopt::search
