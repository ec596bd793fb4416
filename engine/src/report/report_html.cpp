// report.html: one self-contained page (inline CSS, inline SVG charts drawn
// here, a little inline JS; a Content-Security-Policy forbids every fetch).
// Every string from the report goes through escape_html; class names built
// from report values are reduced to [a-z0-9_-].
//
// The inline script sorts tables on a header click and, once the DOM is ready,
// records how many charts and bars have a non-empty layout box in
// body[data-charts-rendered] / body[data-bars-rendered]
// (tests/python/test_report_html.py reads them from headless Chromium).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/report.h"
#include "report/report_html_llm.h"
#include "report/report_svg.h"

namespace kopt::report {

namespace {

using nlohmann::json;
using namespace detail;
using svg::Bar;
using svg::Row;
using svg::Series;
using svg::hbar_chart;
using svg::stacked_chart;
using svg::truncate;

std::string h(std::string_view s) { return escape_html(s); }

// A report value usable inside a class name.
std::string css_token(std::string_view s) {
  std::string out;
  for (char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') out.push_back(c);
    else if (c >= 'A' && c <= 'Z') out.push_back(static_cast<char>(c - 'A' + 'a'));
  }
  return out.empty() ? "none" : out;
}

// Text (escaped) or a dash when empty.
std::string h_or_dash(std::string_view s) { return s.empty() ? std::string(kDash) : h(s); }
std::string code_or_dash(std::string_view s) { return s.empty() ? std::string(kDash) : "<code>" + h(s) + "</code>"; }

std::string num_attr(std::optional<double> v) { return v ? fmt::format(" data-v=\"{}\"", *v) : ""; }

// ---- page parts ----

constexpr const char* kStyle = R"CSS(
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#dadce0;--head:#f4f5f7}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif;color:var(--fg);background:#fff;margin:0;padding:12px 24px 48px}
p,ul{max-width:1100px}
h1{font-size:22px;margin:12px 0}
h2{font-size:18px;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:24px 0 6px}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
pre{background:var(--head);padding:8px 12px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
p.explain{color:var(--muted);margin:4px 0 8px}
.headline{font-size:17px;padding:10px 14px;border-radius:6px;background:#e8f0fe}
.headline.unmeasured{background:#fef7e0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 14px}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--head);font-weight:600;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.facts th{text-align:right}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[data-dir=asc]::after{content:" \25B2"}
table.sortable th[data-dir=desc]::after{content:" \25BC"}
.s-passed,.o-accepted,.yes{color:#137333}
.s-failed,.o-rejected{color:#b3261e;font-weight:600}
.s-not_measured,.s-skipped,.o-screened_out,.o-not_run,.no{color:var(--muted)}
td.gate .sum{color:var(--muted);font-size:12px}
td.note{min-width:220px;max-width:480px}
#kernel-table td:first-child{min-width:220px;max-width:360px;overflow-wrap:anywhere}
table.compact th{white-space:normal;vertical-align:bottom}
table.compact th,table.compact td{padding:3px 4px}
table.compact small{color:var(--muted)}
table.compact td.note{min-width:200px;overflow-wrap:anywhere}
details.not-run{margin:4px 0 14px}
details.not-run summary{cursor:pointer;color:var(--muted)}
h3 code{font-size:14px}
svg.chart{display:block;max-width:100%;height:auto;margin:6px 0 10px}
svg.chart text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:var(--fg)}
svg.chart text.value{fill:var(--muted)}
.bar-before{fill:#9aa0a6}.bar-after{fill:#1a73e8}.bar-floor{fill:#34a853}.bar-bytes{fill:#80868b}
.bar-stage{fill:#8e63ce}.seg-triton{fill:#1a73e8}.seg-vendor{fill:#f29900}
svg.chart rect.bar:hover{opacity:.8}
)CSS";

constexpr const char* kScript = R"JS(
(function(){
  function sortable(t){
    var heads=t.tHead?t.tHead.rows[0].cells:[];
    Array.prototype.forEach.call(heads,function(th,i){
      th.addEventListener('click',function(){
        var asc=th.dataset.dir!=='asc',body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
        Array.prototype.forEach.call(heads,function(o){delete o.dataset.dir;});
        th.dataset.dir=asc?'asc':'desc';
        function key(r){var c=r.cells[i];if(!c)return '';var v=c.getAttribute('data-v')||'';
          return v!==''?parseFloat(v):c.textContent.trim().toLowerCase();}
        rows.sort(function(a,b){var x=key(a),y=key(b);
          if(typeof x!==typeof y)return typeof x==='number'?-1:1;
          return (x<y?-1:x>y?1:0)*(asc?1:-1);});
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  }
  function check(){
    var charts=0,bars=0;
    document.querySelectorAll('svg.chart').forEach(function(s){
      var r=s.getBoundingClientRect();if(r.width>0&&r.height>0)charts++;
      s.querySelectorAll('rect.bar').forEach(function(b){var q=b.getBoundingClientRect();if(q.width>0&&q.height>0)bars++;});
    });
    document.body.dataset.chartsRendered=String(charts);
    document.body.dataset.barsRendered=String(bars);
  }
  function ready(){document.querySelectorAll('table.sortable').forEach(sortable);check();}
  if(document.readyState==='loading')document.addEventListener('DOMContentLoaded',ready);else ready();
})();
)JS";

void headline(std::string& out, const json& r, bool measured) {
  const json& m = object(r, "module");
  if (const json& i = object(r, "interrupted"); !i.empty())
    out += fmt::format("<p class=\"headline interrupted\"><strong>Interrupted ({}) during the {} stage: this report is "
                       "partial</strong>, what was decided before the interrupt; nothing unverified is in the "
                       "result.</p>\n",
                       h(text(i, "signal")), h(text(i, "stage")));
  if (const json& nt = array(r, "not_tried"); !nt.empty()) {
    out += "<p><strong>Not tried:</strong></p>\n<ul class=\"not-tried\">\n";
    for (const json& n : nt) out += "<li>" + h(n.is_string() ? n.get<std::string>() : n.dump()) + "</li>\n";
    out += "</ul>\n";
  }
  if (!measured) {
    out += "<p class=\"headline unmeasured\"><strong>Performance not measured (CPU mode).</strong> Kernel times and G4 "
           "need a GPU: this report shows no kernel or module time and no speedup.</p>\n";
  } else if (auto s = number(m, "speedup")) {
    out += fmt::format("<p class=\"headline\"><strong>Module speedup: {}</strong> &mdash; {} ms &rarr; {} ms per run "
                       "(torch.compile baseline &rarr; optimized).</p>\n",
                       format_speedup(s), format_ms(number(m, "baseline_ms")), format_ms(number(m, "optimized_ms")));
  } else {
    out += fmt::format("<p class=\"headline\"><strong>Module speedup: {}</strong> (no end-to-end time in this "
                       "report).</p>\n", kDash);
  }
  if (boolean(m, "changed") == false)
    out += "<p>No kernel was replaced: the optimized module is the baseline, unchanged.</p>\n";
}

void overview(std::string& out, const json& r) {
  auto row = [&](const char* k, const std::string& v) { out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", k, v); };
  out += "<table class=\"facts\">\n";
  row("Bundle", code_or_dash(text(r, "bundle")));
  row("Problem", code_or_dash(text(r, "problem")));
  row("Output", code_or_dash(text(r, "out_dir")));
  std::string device = text(r, "device"), gpu = text(r, "gpu");
  row("Device", gpu.empty() ? h_or_dash(device) : device.empty() ? h(gpu) : h(device) + " &mdash; " + h(gpu));
  row("Versions", h(versions_line(r)));
  row("Agents", h_or_dash(text(r, "agents")));
  row("Wall time", fmt::format("{} of a {} budget", format_seconds(number(r, "elapsed_s")),
                               format_seconds(number(r, "budget_s"))));
  row("Ceilings", h(ceilings_line(r)));
  row("Result", h(summary_line(r)));
  const json& e2e = object(object(r, "module"), "end_to_end");
  std::string st = text(e2e, "status");
  row("End-to-end gate", e2e.empty() ? std::string(kDash)
                                     : fmt::format("<span class=\"s-{}\">{}</span>", css_token(st), h(status_words(st))));
  out += "</table>\n";
}

void kernel_chart(std::string& out, const json& r, bool measured) {
  const json& ks = array(r, "kernels");
  out += "<h2>Kernels</h2>\n";
  if (ks.empty()) {
    out += "<p>No Triton kernels in this report.</p>\n";
    return;
  }
  constexpr size_t kMaxRows = 40;
  std::vector<Row> rows;
  std::vector<Series> series;
  bool any_floor = false, any_bytes = false;
  for (const json& k : ks) any_floor |= number(k, "floor_ms").has_value(), any_bytes |= number(k, "bytes").has_value();
  if (measured) {
    out += "<p class=\"explain\">Device time per module run (all calls of the kernel): torch.compile's kernel, the "
           "kernel after optimization, and its roofline floor from the measured ceilings.</p>\n";
    series = {{"bar-before", "before"}, {"bar-after", "after"}, {"bar-floor", "floor"}};
    for (const json& k : ks) {
      auto b = number(k, "baseline_ms"), a = after_ms(k), f = number(k, "floor_ms");
      rows.push_back({text(k, "name"), {{b, format_ms(b) + " ms"}, {a, format_ms(a) + " ms"}, {f, format_ms(f) + " ms"}}});
    }
  } else if (any_floor) {
    out += "<p class=\"explain\">Kernel times not measured (CPU mode). Roofline floors from the ceilings in this "
           "report (a model, not a measurement):</p>\n";
    series = {{"bar-floor", "floor"}};
    for (const json& k : ks) {
      auto f = number(k, "floor_ms");
      rows.push_back({text(k, "name"), {{f, format_ms(f) + " ms"}}});
    }
  } else if (any_bytes) {
    out += "<p class=\"explain\">Kernel times not measured (CPU mode). Bytes each kernel must move:</p>\n";
    series = {{"bar-bytes", "bytes"}};
    for (const json& k : ks) {
      auto b = number(k, "bytes");
      rows.push_back({text(k, "name"), {{b, format_bytes(b)}}});
    }
  } else {
    out += "<p class=\"explain\">Kernel times not measured (CPU mode).</p>\n";
    return;
  }
  if (rows.size() > kMaxRows) {
    out += fmt::format("<p class=\"explain\">The first {} of {} kernels; all are in the table below.</p>\n", kMaxRows,
                       rows.size());
    rows.resize(kMaxRows);
  }
  out += hbar_chart("chart-kernels", "Per-kernel time before, after and floor", series, rows);
}

void split(std::string& out, const json& r, bool measured) {
  out += "<h2>Triton vs vendor time</h2>\n";
  const json& vendor = array(r, "vendor");
  if (!measured) {
    out += "<p>Not measured (CPU mode).</p>\n";
  } else {
    const json& m = object(r, "module");
    auto t = number(m, "triton_ms"), v = number(m, "vendor_ms");
    out += "<p class=\"explain\">Baseline GPU time per run: the Triton kernels kernelopt may replace, and the vendor "
           "calls (cuBLAS/cuDNN/ATen) it keeps.</p>\n";
    if (t || v)
      out += stacked_chart("chart-split", "Baseline time split: Triton kernels vs vendor calls",
                           {{"seg-triton", "Triton kernels"}, {"seg-vendor", "Vendor calls"}},
                           {{t, format_ms(t) + " ms"}, {v, format_ms(v) + " ms"}});
    else
      out += fmt::format("<p>{}</p>\n", kDash);
  }
  if (vendor.empty()) return;
  out += "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>Vendor kernel</th>";
  if (measured) out += "<th>ms per run</th>";
  out += "</tr></thead><tbody>\n";
  for (const json& k : vendor) {
    out += "<tr><td>" + code_or_dash(text(k, "name")) + "</td>";
    if (measured) {
      auto ms = number(k, "ms_per_run");
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(ms), format_ms(ms));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

void stages(std::string& out, const json& r) {
  out += "<h2>Time by stage</h2>\n<p class=\"explain\">Wall-clock time of each pipeline stage (the optimizer's own "
         "time, not kernel performance).</p>\n";
  const json& st = array(r, "stages");
  std::vector<Row> rows;
  bool any = false;
  for (const json& s : st) {
    auto sec = number(s, "seconds");
    any |= sec.has_value();
    rows.push_back({text(s, "name"), {{sec, format_seconds(sec)}}});
  }
  if (!any) {
    out += "<p>No stage times recorded.</p>\n";
    return;
  }
  out += hbar_chart("chart-stages", "Wall-clock time by pipeline stage", {{"bar-stage", "seconds"}}, rows);
}

std::string accepted_cell(const json& k) {
  auto a = boolean(k, "accepted");
  if (!a) return "<td>—</td>";
  if (!*a) return "<td class=\"no\">no (fell back)</td>";
  std::string chosen = text(k, "chosen");
  return "<td class=\"yes\">yes" + (chosen.empty() ? std::string() : " (" + h(chosen) + ")") + "</td>";
}

void kernel_table(std::string& out, const json& r, bool measured) {
  const json& ks = array(r, "kernels");
  if (ks.empty()) return;
  out += "<div class=\"scroll\"><table class=\"sortable compact\" id=\"kernel-table\"><thead><tr><th>Kernel</th><th>Kind</th>"
         "<th>Bottleneck</th><th>Bytes</th><th title=\"matrix-multiply FLOPs (tl.dot); elementwise arithmetic is not "
         "counted\">Matmul FLOPs</th>";
  if (measured) out += "<th>Before (ms)</th><th>After (ms)</th><th>Floor (ms)</th><th>× floor</th><th>Speedup</th>";
  else out += "<th>Floor (ms)</th>";
  out += "<th>Accepted</th><th>Note</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < ks.size(); ++i) {
    const json& k = ks[i];
    std::string kind = text(k, "kind"), family = text(k, "family");
    if (!family.empty() && family != kind) kind = kind.empty() ? family : kind + " / " + family;
    auto before = number(k, "baseline_ms"), after = after_ms(k), floor = number(k, "floor_ms");
    auto bytes = number(k, "bytes"), flops = number(k, "flops");
    std::string name = text(k, "name");
    out += fmt::format("<tr><td><a href=\"#k{}\"><code>{}</code></a></td><td>{}</td><td>{}</td>", i,
                       name.empty() ? std::string(kDash) : h(name), h_or_dash(kind), h_or_dash(text(k, "bottleneck")));
    out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(bytes), format_bytes(bytes));
    out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(flops), format_matmul_flops(flops));
    if (measured) {
      std::optional<double> speedup, above;
      if (before && after && *after > 0) speedup = *before / *after;
      if (after && floor && *floor > 0) above = *after / *floor;
      std::string above_text = format_above_floor(before, floor);
      if (above_text != kDash) above_text += " &rarr; " + format_above_floor(after, floor);
      out += fmt::format("<td class=\"num\"{}>{}</td><td class=\"num\"{}>{}</td><td class=\"num\"{}>{}</td>",
                         num_attr(before), format_ms(before), num_attr(after), format_ms(after), num_attr(floor),
                         format_ms(floor));
      out += fmt::format("<td class=\"num\"{}>{}</td><td class=\"num\"{}>{}</td>", num_attr(above), above_text,
                         num_attr(speedup), format_speedup(speedup));
    } else {
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(floor), format_ms(floor));
    }
    out += accepted_cell(k);
    out += "<td class=\"note\">" + h_or_dash(text(k, "note")) + "</td></tr>\n";
  }
  out += "</tbody></table></div>\n";
}

std::vector<std::string> gate_names(const json& candidates) {
  std::vector<std::string> names;
  for (const json& c : candidates)
    for (const json& g : array(c, "gates"))
      if (std::string n = text(g, "gate"); !n.empty() && std::find(names.begin(), names.end(), n) == names.end())
        names.push_back(n);
  return names;
}

// One gate's cell: its status, the numbers it judged (the summary) and, on hover, the rule they were held to.
std::string gate_cell(const json& g) {
  std::string st = text(g, "status"), sum = text(g, "summary"), rule = text(object(g, "evidence"), "rule");
  std::string title = rule.empty() || rule == sum ? std::string() : " title=\"" + h(rule) + "\"";
  return fmt::format("<td class=\"gate s-{}\"{}>{}{}</td>", css_token(st), title, h(status_words(st)),
                     sum.empty() ? std::string() : "<br><span class=\"sum\">" + h(sum) + "</span>");
}

void candidate_table(std::string& out, const std::vector<const json*>& cs, const std::vector<std::string>& gates,
                     bool measured) {
  out += "<div class=\"scroll\"><table class=\"sortable candidates\"><thead><tr><th>Candidate</th><th>Origin</th>"
         "<th>Description</th><th>Hash</th><th>Outcome</th>";
  if (measured) out += "<th>Speedup</th>";
  for (const auto& g : gates) out += "<th>" + h(g) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const json* cp : cs) {
    const json& c = *cp;
    std::string hash = text(c, "hash");
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>", h_or_dash(text(c, "id")), h_or_dash(text(c, "origin")),
                       code_or_dash(text(c, "description")));
    out += hash.empty() ? "<td>—</td>"
                        : fmt::format("<td title=\"{}\"><code>{}</code></td>", h(hash), h(truncate(hash, 12)));
    out += fmt::format("<td class=\"o-{}\">{}</td>", css_token(text(c, "outcome")), h(outcome_words(c)));
    if (measured) {
      auto s = number(c, "speedup");
      out += fmt::format("<td class=\"num\"{}>{}</td>", num_attr(s), format_speedup(s));
    }
    for (const auto& g : gates) {
      const json* found = nullptr;
      for (const json& gj : array(c, "gates"))
        if (text(gj, "gate") == g) {
          found = &gj;
          break;
        }
      out += found ? gate_cell(*found) : "<td>—</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

void candidates(std::string& out, const json& r, bool measured) {
  const json& ks = array(r, "kernels");
  if (ks.empty()) return;
  out += "<h2>Candidates</h2>\n<p class=\"explain\">Every candidate of every kernel with each gate's outcome; click "
         "a column header to sort.</p>\n";
  for (size_t i = 0; i < ks.size(); ++i) {
    const json& k = ks[i];
    out += fmt::format("<section class=\"kernel\" id=\"k{}\">\n<h3>{}</h3>\n", i, code_or_dash(text(k, "name")));
    std::vector<std::string> facts;
    if (std::string f = text(k, "family"); !f.empty()) facts.push_back("family " + h(f));
    std::vector<std::string> ops;
    for (const json& op : array(k, "aten_ops"))
      if (op.is_string()) ops.push_back("<code>" + h(op.get<std::string>()) + "</code>");
    if (!ops.empty()) facts.push_back(fmt::format("{}", fmt::join(ops, ", ")));
    if (field(k, "graph")) facts.push_back("graph " + format_count(k, "graph"));
    if (field(k, "calls_per_run")) {
      std::string n = format_count(k, "calls_per_run");
      facts.push_back(n + (n == "1" ? " call per run" : " calls per run"));
    }
    std::string chosen = text(k, "chosen");
    facts.push_back(chosen.empty() ? "no candidate chosen" : "chosen " + h(chosen));
    out += fmt::format("<p>{}</p>\n", fmt::join(facts, " &middot; "));
    if (std::string cfg = winning_config(k); !cfg.empty())  // a user's kernel: the line to paste into its source
      out += "<p class=\"config\">Winning config, to paste into the kernel's " +
             std::string(cfg.rfind("helion", 0) == 0 ? "<code>@helion.kernel(config=...)</code>"
                                                     : "<code>@triton.autotune(configs=[...])</code>") +
             ": <code>" + h(cfg) + "</code></p>\n";
    if (std::string note = text(k, "note"); !note.empty()) out += "<p class=\"note\">Note: " + h(note) + "</p>\n";
    for (const json& d : array(k, "declined"))
      if (d.is_string()) out += "<p class=\"note\">Declined: " + h(d.get<std::string>()) + "</p>\n";
    const json& cs = array(k, "candidates");
    if (cs.empty()) {
      out += "<p>No candidates.</p>\n</section>\n";
      continue;
    }
    std::vector<std::string> gates = gate_names(cs);
    std::vector<const json*> ran, not_run;
    for (const json& c : cs) (text(c, "outcome") == "not_run" ? not_run : ran).push_back(&c);
    if (!ran.empty()) candidate_table(out, ran, gates, measured);
    if (!not_run.empty()) {
      // Candidates the budget (or an earlier acceptance) left untried: folded, they carry no gate result.
      out += fmt::format("<details class=\"not-run\"><summary>{} candidate{} not run</summary>\n", not_run.size(),
                         not_run.size() == 1 ? "" : "s");
      candidate_table(out, not_run, gates, measured);
      out += "</details>\n";
    }
    out += "</section>\n";
  }
}

void end_to_end(std::string& out, const json& r) {
  const json& e2e = object(object(r, "module"), "end_to_end");
  if (e2e.empty()) return;
  std::string gate = text(e2e, "gate"), st = text(e2e, "status");
  out += fmt::format("<h2>End-to-end gate</h2>\n<p>{}: <span class=\"s-{}\">{}</span></p>\n",
                     h(gate.empty() ? "E2E" : gate), css_token(st), h(status_words(st)));
  if (const json* ev = field(e2e, "evidence")) {
    // Escaped line by line: clean() would turn the dump's newlines into spaces.
    std::string dump = ev->dump(2, ' ', false, json::error_handler_t::replace), body;
    for (size_t start = 0; start <= dump.size();) {
      size_t end = std::min(dump.find('\n', start), dump.size());
      body += h(std::string_view(dump).substr(start, end - start)) + (end < dump.size() ? "\n" : "");
      start = end + 1;
    }
    out += "<pre>" + body + "</pre>\n";
  }
}

}  // namespace

namespace detail {
const char* html_style() { return kStyle; }
const char* html_script() { return kScript; }
}  // namespace detail

std::string render_html(const json& r) {
  bool measured = performance_measured(r);
  std::string bundle = text(r, "bundle");
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"kernelopt\">\n";
  out += "<title>kernelopt report" + (bundle.empty() ? std::string() : ": " + h(bundle)) + "</title>\n";
  out += std::string("<style>") + kStyle + "</style>\n</head>\n";
  out += fmt::format("<body data-performance-measured=\"{}\">\n", measured ? "true" : "false");
  out += "<h1>kernelopt report" + (bundle.empty() ? std::string() : ": <code>" + h(bundle) + "</code>") + "</h1>\n";
  headline(out, r, measured);
  if (std::string mem = memory_line(r); !mem.empty()) out += "<p id=\"memory\">" + h(mem) + "</p>\n";
  overview(out, r);
  kernel_chart(out, r, measured);
  kernel_table(out, r, measured);
  split(out, r, measured);
  stages(out, r);
  candidates(out, r, measured);
  html_llm_agents(out, r);  // report_html_llm.cpp
  end_to_end(out, r);
  out += std::string("<script>") + kScript + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace kopt::report
