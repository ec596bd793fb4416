#include "verify/gate_status.h"

#include <nlohmann/json.hpp>

namespace kopt::verify {

std::string_view to_string(GateStatus s) {
  switch (s) {
    case GateStatus::passed: return "passed";
    case GateStatus::failed: return "failed";
    case GateStatus::not_measured: return "not_measured";
  }
  return "?";  // unreachable: every value is named above (-Wswitch keeps it so)
}

std::optional<GateStatus> parse_gate_status(std::string_view text) {
  for (GateStatus s : {GateStatus::passed, GateStatus::failed, GateStatus::not_measured})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

void to_json(nlohmann::json& j, GateStatus s) { j = std::string(to_string(s)); }

}  // namespace kopt::verify
