// A gate's status, as GateRecord holds it. Its text is what report.json, the results database and
// `kernelopt verify` print (docs/report.md): to_string writes it, parse_gate_status reads a stored one back.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace kopt::verify {

enum class GateStatus {
  passed,
  failed,
  not_measured,  // correct, but no time was measured (CPU mode): passes without a speed claim
};

std::string_view to_string(GateStatus s);
std::optional<GateStatus> parse_gate_status(std::string_view text);
// A status in JSON is its text (found by argument-dependent lookup; without it nlohmann would write the number).
void to_json(nlohmann::json& j, GateStatus s);

// Whether a gate with this status lets the cascade go on (passed, or correct and not measured).
inline bool lets_through(GateStatus s) { return s == GateStatus::passed || s == GateStatus::not_measured; }

}  // namespace kopt::verify
