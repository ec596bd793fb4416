// report.html's "LLM agents" section (report_html_llm.cpp): rendered from the
// report's `llm` object with every string escaped and missing numbers as "—";
// absent (no heading at all) when the report has no `llm` object.
#include <gtest/gtest.h>

#include "report/report.h"

using nlohmann::json;
namespace rep = kopt::report;

namespace {

// A CPU-mode report of one kernel with LLM agents; hostile text where the LLM (or its config) supplies strings.
json llm_report() {
  return json::parse(R"({
    "format": "kernelopt-report", "format_version": 1, "bundle": "corpus/softmax_large",
    "performance_measured": false, "agents": "hybrid",
    "module": {"changed": true, "end_to_end": {"gate": "E2E", "status": "not_measured"}},
    "kernels": [
      {"name": "triton_red_fused__softmax_0", "accepted": true, "chosen": "c2",
       "llm_explanation": "two passes per row </td><script>alert(1)</script>",
       "llm_ideas": ["one pass with an online max", "<img src=x onerror=alert(2)>", 7, ""],
       "candidates": [{"id": "c2", "origin": "llm:rewrite", "outcome": "accepted", "gates": []}]},
      {"name": "triton_poi_fused_gelu_1", "accepted": false, "candidates": []}],
    "llm": {"provider": "openai<script>", "model": "m\"x'", "http_requests": 4, "exchanges": 5, "not_sent": 1,
            "input_tokens": 1200, "output_tokens": 345, "cost": 0.01234,
            "budget": {"max_tokens": 100000, "max_cost": 1.0, "spent": true},
            "roles": {"coder": {"exchanges": 3, "unparsable": 1, "failed": 0, "refused": 1, "candidates": 2,
                                "rejected_at": {"G1": 1, "G2": 0, "G3": 0, "G4": 0}, "accepted": 1, "chosen": 1,
                                "input_tokens": 1000, "output_tokens": 300, "cost": 0.0111},
                      "<b>profiler</b>": {"exchanges": 2, "cost": null, "rejected_at": "odd"}},
            "kernels_won": 1, "speedups_won": [null], "cost_per_kernel_won": 0.01234,
            "tokens_per_kernel_won": 1545.0, "transcripts": "out/transcripts.jsonl"}
  })");
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

}  // namespace

TEST(ReportHtmlLlm, RendersSectionWithEscapedContent) {
  std::string html = rep::render_html(llm_report());
  ASSERT_EQ(count(html, "<h2 id=\"llm\">LLM agents</h2>"), 1u);
  // After the candidates, before the end-to-end gate, as in report.md.
  EXPECT_LT(html.find("<h2>Candidates</h2>"), html.find("<h2 id=\"llm\">"));
  EXPECT_LT(html.find("<h2 id=\"llm\">"), html.find("<h2>End-to-end gate</h2>"));
  EXPECT_NE(html.find("<p>openai&lt;script&gt; &middot; <code>m&quot;x&#39;</code>: 5 exchange(s), 4 HTTP request(s), "
                      "1 not sent (budget spent); 1200 input + 345 output tokens, cost 0.0123. Transcripts: "
                      "<code>out/transcripts.jsonl</code>.</p>"),
            std::string::npos)
      << html;
  // The coder's row: counts carry data-v for sorting; tokens are input + output.
  EXPECT_NE(html.find("<tr><td>coder</td><td class=\"num\" data-v=\"3\">3</td><td class=\"num\" data-v=\"1\">1</td>"
                      "<td class=\"num\" data-v=\"0\">0</td><td class=\"num\" data-v=\"1\">1</td>"
                      "<td class=\"num\" data-v=\"2\">2</td><td class=\"num\" data-v=\"1\">1</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"1300\">1300</td><td class=\"num\" data-v=\"0.0111\">0.0111</td></tr>"),
            std::string::npos);
  // The odd role: escaped name, missing counts, tokens and cost all dashes (not 0).
  size_t odd = html.find("<tr><td>&lt;b&gt;profiler&lt;/b&gt;</td><td class=\"num\" data-v=\"2\">2</td>");
  ASSERT_NE(odd, std::string::npos) << html;
  std::string row = html.substr(odd, html.find("</tr>", odd) - odd);
  EXPECT_EQ(count(row, "<td class=\"num\">—</td>"), 12u) << row;
  EXPECT_NE(html.find("Kernels won by an LLM candidate: 1; cost per kernel won: 0.0123; tokens per kernel won: 1545."),
            std::string::npos);
  // Per kernel: only the kernel with LLM text gets a row; its text is escaped; non-string and empty ideas dropped.
  EXPECT_NE(html.find("<tr><td><a href=\"#k0\"><code>triton_red_fused__softmax_0</code></a></td><td class=\"note\">"
                      "two passes per row &lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td><td class=\"note\"><ul>"
                      "<li>one pass with an online max</li><li>&lt;img src=x onerror=alert(2)&gt;</li></ul></td></tr>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("href=\"#k1\"><code>triton_poi_fused_gelu_1</code></a></td><td class=\"note\">"), std::string::npos);
  EXPECT_EQ(count(html, "<script>"), 1u);  // only the page's own
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("null"), std::string::npos);
  EXPECT_EQ(count(html, "<table class=\"sortable\" id=\"llm-"), 2u);  // the page's script sorts both
  EXPECT_EQ(html, rep::render_html(llm_report()));                   // deterministic
}

TEST(ReportHtmlLlm, MissingFieldsAreDashes) {
  json r = llm_report();
  r["llm"] = {{"roles", json::object()}, {"cost_per_kernel_won", nullptr}, {"budget", 3}};
  std::string html = rep::render_html(r);
  ASSERT_EQ(count(html, "<h2 id=\"llm\">LLM agents</h2>"), 1u);
  EXPECT_NE(html.find("<p>— &middot; —: — exchange(s), — HTTP request(s), — not sent; — input + — output tokens, "
                      "cost —. Transcripts: —.</p>\n<p>No LLM exchanges.</p>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("Kernels won by an LLM candidate: —; cost per kernel won: —; tokens per kernel won: —."),
            std::string::npos);
}

TEST(ReportMdLlm, MissingCostsAndTokensAreDashesNotZero) {
  json r = llm_report();
  r["llm"] = {{"roles", {{"coder", {{"exchanges", 2}}}}}, {"cost_per_kernel_won", nullptr}};
  std::string md = rep::render_markdown(r);
  EXPECT_NE(md.find("output tokens, cost —."), std::string::npos) << md;
  EXPECT_NE(md.find("| — | — |\n"), std::string::npos) << md;  // the coder row: tokens and cost unknown
  EXPECT_EQ(md.find("0.0000"), std::string::npos) << md;
}

TEST(ReportHtmlLlm, NoLlmObjectNoSection) {
  const std::vector<json> odd = {json(nullptr), json::object(), json("llm"), json::array({1})};
  for (size_t i = 0; i <= odd.size(); ++i) {
    json r = llm_report();
    json llm = i < odd.size() ? odd[i] : json("(absent)");
    if (i < odd.size()) r["llm"] = llm;
    else r.erase("llm");
    std::string html = rep::render_html(r);
    EXPECT_EQ(html.find("LLM agents"), std::string::npos) << llm.dump();
    EXPECT_EQ(html.find("id=\"llm"), std::string::npos) << llm.dump();
    // The kernels' LLM text belongs to the section: without it, it is not shown either.
    EXPECT_EQ(html.find("online max"), std::string::npos) << llm.dump();
  }
}
