#include "search/outcome.h"

#include <nlohmann/json.hpp>

namespace kopt::search {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::not_run: return "not_run";
    case Outcome::screened_out: return "screened_out";
    case Outcome::accepted: return "accepted";
    case Outcome::rejected: return "rejected";
  }
  return "?";  // unreachable: every value is named above (-Wswitch keeps it so)
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  for (Outcome o : {Outcome::not_run, Outcome::screened_out, Outcome::accepted, Outcome::rejected})
    if (to_string(o) == text) return o;
  return std::nullopt;
}

void to_json(nlohmann::json& j, Outcome o) { j = std::string(to_string(o)); }

}  // namespace kopt::search
