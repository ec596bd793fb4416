// report.html's "LLM agents" section: the same facts as report.md's (provider,
// model, exchanges, tokens, cost, one row per role, cost per kernel won), plus
// each kernel's LLM profiler reading and planner ideas. Every string goes
// through escape_html; a missing or odd field is shown as "—" (never as 0, so
// an absent cost is not mistaken for a free run). Roles come in the object's
// key order (sorted), kernels in report order, so the output is deterministic.
#include "report/report_html_llm.h"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "report/report.h"

namespace kopt::report::detail {

namespace {

using nlohmann::json;

std::string h_or_dash(std::string_view s) { return s.empty() ? std::string(kDash) : escape_html(s); }

std::string fixed(std::optional<double> v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : std::string(kDash);
}

// A numeric table cell carrying data-v so the page's script sorts it by value.
std::string num_cell(std::optional<double> v, const std::string& shown) {
  return v ? fmt::format("<td class=\"num\" data-v=\"{}\">{}</td>", *v, shown) : "<td class=\"num\">" + shown + "</td>";
}
std::string count_cell(const json& j, std::string_view key) { return num_cell(number(j, key), format_count(j, key)); }

// input + output tokens; a dash only when neither is there.
std::optional<double> tokens(const json& j) {
  auto in = number(j, "input_tokens"), out = number(j, "output_tokens");
  if (!in && !out) return std::nullopt;
  return in.value_or(0) + out.value_or(0);
}

void roles_table(std::string& out, const json& l) {
  const json& roles = object(l, "roles");
  if (roles.empty()) {
    out += "<p>No LLM exchanges.</p>\n";
    return;
  }
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"llm-roles\"><thead><tr><th>Role</th><th>Exchanges</th>"
         "<th>Unparsable</th><th>Failed</th><th>Refused</th><th>Candidates</th><th>Rejected G1</th>"
         "<th>Rejected G2</th><th>Rejected G3</th><th>Rejected G4</th><th>Accepted</th><th>Chosen</th>"
         "<th>Tokens</th><th>Cost</th></tr></thead><tbody>\n";
  for (const auto& [role, v] : roles.items()) {
    const json& at = object(v, "rejected_at");
    out += "<tr><td>" + h_or_dash(role) + "</td>";
    for (const char* key : {"exchanges", "unparsable", "failed", "refused", "candidates"}) out += count_cell(v, key);
    for (const char* gate : {"G1", "G2", "G3", "G4"}) out += count_cell(at, gate);
    out += count_cell(v, "accepted") + count_cell(v, "chosen");
    auto t = tokens(v);
    auto cost = number(v, "cost");
    out += num_cell(t, fixed(t, 0)) + num_cell(cost, fixed(cost, 4)) + "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

// The LLM profiler's reading and the LLM planner's ideas, for the kernels that have either.
void kernel_notes(std::string& out, const json& r) {
  const json& ks = array(r, "kernels");
  std::string rows;
  for (size_t i = 0; i < ks.size(); ++i) {
    const json& k = ks[i];
    std::string explanation = text(k, "llm_explanation");
    std::vector<std::string> ideas;
    for (const json& idea : array(k, "llm_ideas"))
      if (idea.is_string() && !idea.get<std::string>().empty()) ideas.push_back(idea.get<std::string>());
    if (explanation.empty() && ideas.empty()) continue;
    std::string name = text(k, "name");
    rows += fmt::format("<tr><td><a href=\"#k{}\">{}</a></td><td class=\"note\">{}</td><td class=\"note\">", i,
                        name.empty() ? std::string(kDash) : "<code>" + escape_html(name) + "</code>",
                        h_or_dash(explanation));
    if (ideas.empty()) {
      rows += kDash;
    } else {
      rows += "<ul>";
      for (const auto& idea : ideas) rows += "<li>" + escape_html(idea) + "</li>";
      rows += "</ul>";
    }
    rows += "</td></tr>\n";
  }
  if (rows.empty()) return;
  out += "<h3>Per kernel</h3>\n<div class=\"scroll\"><table class=\"sortable\" id=\"llm-kernels\"><thead><tr>"
         "<th>Kernel</th><th>Profiler's reading</th><th>Planner's ideas</th></tr></thead><tbody>\n" +
         rows + "</tbody></table></div>\n";
}

}  // namespace

void html_llm_agents(std::string& out, const json& r) {
  const json& l = object(r, "llm");
  if (l.empty()) return;
  std::string model = text(l, "model");
  auto cost = number(l, "cost");
  std::string transcripts = text(l, "transcripts");
  out += "<h2 id=\"llm\">LLM agents</h2>\n<p class=\"explain\">What the LLM agents' replies became at the gates, "
         "and what they cost (docs/llm.md).</p>\n";
  out += fmt::format("<p>{} &middot; {}: {} exchange(s), {} HTTP request(s), {} not sent{}; {} input + {} output "
                     "tokens, cost {}. Transcripts: {}.</p>\n",
                     h_or_dash(text(l, "provider")), model.empty() ? std::string(kDash) : "<code>" + escape_html(model) + "</code>",
                     format_count(l, "exchanges"), format_count(l, "http_requests"), format_count(l, "not_sent"),
                     boolean(object(l, "budget"), "spent").value_or(false) ? " (budget spent)" : "",
                     format_count(l, "input_tokens"), format_count(l, "output_tokens"), fixed(cost, 4),
                     transcripts.empty() ? std::string(kDash) : "<code>" + escape_html(transcripts) + "</code>");
  roles_table(out, l);
  out += fmt::format("<p>Kernels won by an LLM candidate: {}; cost per kernel won: {}; tokens per kernel won: {}.</p>\n",
                     format_count(l, "kernels_won"), fixed(number(l, "cost_per_kernel_won"), 4),
                     fixed(number(l, "tokens_per_kernel_won"), 0));
  kernel_notes(out, r);
}

}  // namespace kopt::report::detail
