#include "results/record.h"

#include "util/error.h"

namespace kopt::results {

using nlohmann::json;

json cascade_json(const verify::CascadeResult& r) {
  json gs = json::array();
  for (const verify::GateRecord& g : r.gates)
    gs.push_back({{"gate", g.gate}, {"status", g.status}, {"evidence", g.evidence}});
  return {{"kernel", r.kernel},
          {"candidate_hash", r.candidate_hash},
          {"accepted", r.accepted},
          {"performance_measured", r.performance_measured},
          {"gates", gs}};
}

verify::CascadeResult cascade_from_json(const json& j) {
  verify::CascadeResult r;
  r.accepted = j.value("accepted", false);
  r.performance_measured = j.value("performance_measured", false);
  r.kernel = j.value("kernel", "");
  r.candidate_hash = j.value("candidate_hash", "");
  for (const json& g : j.value("gates", json::array())) {
    std::string status = g.value("status", "");
    std::optional<verify::GateStatus> s = verify::parse_gate_status(status);
    if (!s)
      throw UserError(fmt::format("the results database holds a cascade record with gate status '{}', which no "
                                  "kernelopt writes; give another --db", status));
    r.gates.push_back({g.value("gate", ""), *s, g.value("evidence", json::object())});
  }
  return r;
}

}  // namespace kopt::results
