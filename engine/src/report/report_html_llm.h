// Parts of report.html kept out of report_html.cpp so each file stays readable;
// internal to the report writer (report.h is the interface).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kopt::report::detail {

// The "LLM agents" section (report_html_llm.cpp): appended to `out` only when the
// report has a non-empty `llm` object; nothing otherwise.
void html_llm_agents(std::string& out, const nlohmann::json& report);

}  // namespace kopt::report::detail
