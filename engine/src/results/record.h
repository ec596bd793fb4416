// A cascade's result as the results database keeps it ("cascade" records: the search's cache, which
// reads them back so a re-run measures nothing new, and `kernelopt verify`'s), and back.
#pragma once

#include <nlohmann/json.hpp>

#include "verify/cascade.h"

namespace kopt::results {

nlohmann::json cascade_json(const verify::CascadeResult& r);
verify::CascadeResult cascade_from_json(const nlohmann::json& j);

}  // namespace kopt::results
