// The LLM part of the optimize report: the transcript's exchanges joined with
// the search's verdicts on the candidates they became (by kernel and source
// hash), per role — requests, proposals, candidates accepted, rejected at which
// gate, tokens and cost — and the cost per accepted kernel speedup.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "llm/session.h"
#include "search/search.h"

namespace kopt::pipeline {

nlohmann::json llm_summary(const llm::Session& s, const std::vector<search::KernelOutcome>& outcomes,
                           const std::string& transcript_file);

}  // namespace kopt::pipeline
