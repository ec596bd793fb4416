// report.md: the report as GitHub-flavoured Markdown. Free text is
// backslash-escaped and names are code spans, so nothing from the report can
// become markup (a note holding "<script>" stays text when rendered).
#include <algorithm>

#include <fmt/format.h>

#include "report/report.h"

namespace kopt::report {

namespace {

using nlohmann::json;
using namespace detail;

// Free text for a table cell or paragraph: one line, Markdown punctuation escaped.
std::string md_text(std::string_view s) {
  std::string c = clean(s), out;
  if (c.empty()) return kDash;
  for (char ch : c) {
    if (std::string_view("\\`*_[]<>|&~").find(ch) != std::string_view::npos) out.push_back('\\');
    out.push_back(ch);
  }
  return out;
}

// A code span long enough to hold any backtick run in `s`; `|` escaped for table cells (GFM).
std::string md_code(std::string_view s, bool in_table = true) {
  std::string c = clean(s);
  if (c.empty()) return kDash;
  size_t longest = 0, run = 0;
  for (char ch : c) longest = std::max(longest, run = ch == '`' ? run + 1 : 0);
  std::string fence(longest + 1, '`');
  if (in_table) {
    std::string e;
    for (char ch : c) {
      if (ch == '|') e.push_back('\\');
      e.push_back(ch);
    }
    c = e;
  }
  bool pad = c.front() == '`' || c.back() == '`';
  return fence + (pad ? " " : "") + c + (pad ? " " : "") + fence;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  return fmt::format("{}", fmt::join(parts, sep));
}

void table_header(std::string& out, const std::vector<std::string>& cols) {
  out += "| " + join(cols, " | ") + " |\n|";
  for (size_t i = 0; i < cols.size(); ++i) out += "---|";
  out += "\n";
}

void table_row(std::string& out, const std::vector<std::string>& cells) { out += "| " + join(cells, " | ") + " |\n"; }

std::string percent(double part, double whole) {
  if (whole <= 0) return kDash;
  double pct = 100.0 * part / whole;
  return pct > 0 && pct < 0.5 ? "<1%" : fmt::format("{:.0f}%", pct);
}

void headline(std::string& out, const json& r, bool measured) {
  const json& m = object(r, "module");
  if (const json& i = object(r, "interrupted"); !i.empty())
    out += fmt::format("**Interrupted ({}) during the {} stage: this report is partial**, what was decided before the "
                       "interrupt; nothing unverified is in the result.\n\n",
                       md_text(text(i, "signal")), md_text(text(i, "stage")));
  if (const json& nt = array(r, "not_tried"); !nt.empty()) {
    out += "**Not tried:**\n\n";
    for (const json& n : nt) out += "- " + md_text(n.is_string() ? n.get<std::string>() : n.dump()) + "\n";
    out += "\n";
  }
  if (!measured) {
    out += "**Performance not measured (CPU mode).** Kernel times and G4 need a GPU: this "
           "report shows no kernel or module time and no speedup.\n\n";
  } else if (auto s = number(m, "speedup")) {
    out += fmt::format("**Module speedup: {}** — {} ms → {} ms per run (torch.compile baseline → optimized).\n\n",
                       format_speedup(s), format_ms(number(m, "baseline_ms")), format_ms(number(m, "optimized_ms")));
  } else {
    out += fmt::format("**Module speedup: {}** (no end-to-end time in this report).\n\n", kDash);
  }
  if (boolean(m, "changed") == false)
    out += "No kernel was replaced: the optimized module is the baseline, unchanged.\n\n";
}

void overview(std::string& out, const json& r) {
  table_header(out, {"", ""});
  std::string device = md_text(text(r, "device"));
  if (std::string gpu = text(r, "gpu"); !gpu.empty())
    device = text(r, "device").empty() ? md_text(gpu) : device + " — " + md_text(gpu);
  table_row(out, {"Bundle", md_code(text(r, "bundle"))});
  table_row(out, {"Problem", md_code(text(r, "problem"))});
  table_row(out, {"Output", md_code(text(r, "out_dir"))});
  table_row(out, {"Device", device});
  table_row(out, {"Versions", md_text(versions_line(r))});
  table_row(out, {"Agents", md_text(text(r, "agents"))});
  table_row(out, {"Wall time", fmt::format("{} of a {} budget", format_seconds(number(r, "elapsed_s")),
                                           format_seconds(number(r, "budget_s")))});
  table_row(out, {"Ceilings", md_text(ceilings_line(r))});
  table_row(out, {"Result", md_text(summary_line(r))});
  const json& e2e = object(object(r, "module"), "end_to_end");
  table_row(out, {"End-to-end gate", e2e.empty() ? std::string(kDash) : md_text(status_words(text(e2e, "status")))});
  out += "\n";
}

void stages(std::string& out, const json& r) {
  out += "## Time by stage\n\nWall-clock time of each pipeline stage (the optimizer's own time, not kernel "
         "performance).\n\n";
  const json& st = array(r, "stages");
  if (st.empty()) {
    out += "No stages recorded.\n\n";
    return;
  }
  double sum = 0;
  for (const json& s : st) sum += number(s, "seconds").value_or(0);
  double total = number(r, "elapsed_s").value_or(sum);
  table_header(out, {"Stage", "Time", "Share"});
  for (const json& s : st) {
    auto sec = number(s, "seconds");
    table_row(out, {md_text(text(s, "name")), format_seconds(sec), sec ? percent(*sec, total) : kDash});
  }
  table_row(out, {"**total**", format_seconds(total), ""});
  out += "\n";
}

void split(std::string& out, const json& r, bool measured) {
  out += "## Triton vs vendor time\n\n";
  const json& m = object(r, "module");
  const json& vendor = array(r, "vendor");
  if (!measured) {
    out += "Not measured (CPU mode).";
    if (!vendor.empty()) {
      std::vector<std::string> names;
      for (const json& v : vendor) names.push_back(md_code(text(v, "name"), false));
      out += " Vendor calls kept as they are: " + join(names, ", ") + ".";
    }
    out += "\n\n";
    return;
  }
  auto t = number(m, "triton_ms"), v = number(m, "vendor_ms");
  double whole = t.value_or(0) + v.value_or(0);
  out += "Baseline GPU time per run: the Triton kernels kernelopt may replace, and the vendor calls "
         "(cuBLAS/cuDNN/ATen) it keeps.\n\n";
  table_header(out, {"Part", "ms per run", "Share"});
  table_row(out, {"Triton kernels", format_ms(t), t && v ? percent(*t, whole) : kDash});
  table_row(out, {"Vendor calls", format_ms(v), t && v ? percent(*v, whole) : kDash});
  out += "\n";
  if (!vendor.empty()) {
    table_header(out, {"Vendor kernel", "ms per run"});
    for (const json& k : vendor) table_row(out, {md_code(text(k, "name")), format_ms(number(k, "ms_per_run"))});
    out += "\n";
  }
}

std::string accepted_cell(const json& k) {
  auto a = boolean(k, "accepted");
  if (!a) return kDash;
  if (!*a) return "no (fell back)";
  std::string chosen = text(k, "chosen");
  return chosen.empty() ? "yes" : "yes (" + md_text(chosen) + ")";
}

std::string kind_cell(const json& k) {
  std::string kind = text(k, "kind"), family = text(k, "family");
  if (kind.empty() && family.empty()) return kDash;
  if (family.empty() || family == kind) return md_text(kind);
  return md_text(kind.empty() ? family : kind + " / " + family);
}

void kernels(std::string& out, const json& r, bool measured) {
  out += "## Kernels\n\n";
  const json& ks = array(r, "kernels");
  if (ks.empty()) {
    out += "No Triton kernels in this report.\n\n";
    return;
  }
  if (measured) {
    out += "Times are device time per module run (all calls of the kernel); the floor is the roofline floor from "
           "the measured ceilings; × floor is before → after.\n\n";
    table_header(out, {"Kernel", "Kind", "Bottleneck", "Bytes", "Matmul FLOPs", "Before (ms)", "After (ms)", "Floor (ms)",
                       "× floor", "Speedup", "Accepted", "Note"});
  } else {
    out += "Kernel times not measured (CPU mode). Bytes and matmul FLOPs are what each kernel must move and do; a "
           "floor appears only where ceilings were known.\n\n";
    table_header(out, {"Kernel", "Kind", "Bottleneck", "Bytes", "Matmul FLOPs", "Floor (ms)", "Accepted", "Note"});
  }
  for (const json& k : ks) {
    auto before = number(k, "baseline_ms"), after = after_ms(k), floor = number(k, "floor_ms");
    std::vector<std::string> row = {md_code(text(k, "name")), kind_cell(k), md_text(text(k, "bottleneck")),
                                    format_bytes(number(k, "bytes")), format_matmul_flops(number(k, "flops"))};
    if (measured) {
      std::string above = format_above_floor(before, floor);
      if (above != kDash) above += " → " + format_above_floor(after, floor);
      std::optional<double> speedup;
      if (before && after && *after > 0) speedup = *before / *after;
      row.insert(row.end(), {format_ms(before), format_ms(after), format_ms(floor), above, format_speedup(speedup)});
    } else {
      row.push_back(format_ms(floor));
    }
    row.push_back(accepted_cell(k));
    row.push_back(md_text(text(k, "note")));
    table_row(out, row);
  }
  out += "\n";
}

// Gate names in the order the candidates first show them (G1 G2 G3 G4 in practice).
std::vector<std::string> gate_names(const json& candidates) {
  std::vector<std::string> names;
  for (const json& c : candidates)
    for (const json& g : array(c, "gates"))
      if (std::string n = text(g, "gate"); !n.empty() && std::find(names.begin(), names.end(), n) == names.end())
        names.push_back(n);
  return names;
}

std::string gate_cell(const json& c, const std::string& gate) {
  for (const json& g : array(c, "gates")) {
    if (text(g, "gate") != gate) continue;
    std::string cell = md_text(status_words(text(g, "status")));
    if (std::string s = text(g, "summary"); !s.empty()) cell += ": " + md_text(s);
    return cell;
  }
  return kDash;
}

void candidates(std::string& out, const json& r, bool measured) {
  const json& ks = array(r, "kernels");
  if (ks.empty()) return;
  out += "## Candidates\n\n";
  for (const json& k : ks) {
    out += "### " + md_code(text(k, "name"), false) + "\n\n";
    std::vector<std::string> facts;
    if (std::string f = text(k, "family"); !f.empty()) facts.push_back("family " + md_text(f));
    std::vector<std::string> ops;
    for (const json& op : array(k, "aten_ops"))
      if (op.is_string()) ops.push_back(md_code(op.get<std::string>(), false));
    if (!ops.empty()) facts.push_back(join(ops, ", "));
    if (field(k, "graph")) facts.push_back("graph " + format_count(k, "graph"));
    if (field(k, "calls_per_run")) {
      std::string n = format_count(k, "calls_per_run");
      facts.push_back(n + (n == "1" ? " call per run" : " calls per run"));
    }
    std::string chosen = text(k, "chosen");
    facts.push_back(chosen.empty() ? "no candidate chosen" : "chosen " + md_text(chosen));
    out += join(facts, " · ") + "\n\n";
    // A user's kernel (a Triton kernel file's @triton.autotune, a Helion kernel): the line to paste.
    if (std::string cfg = winning_config(k); !cfg.empty())
      out += (cfg.rfind("helion", 0) == 0 ? "Winning config, to paste into the kernel's `@helion.kernel(config=...)`: "
                                          : "Winning config, to paste into the kernel's `@triton.autotune(configs=[...])`: ") +
             md_code(cfg, false) + "\n\n";
    if (std::string note = text(k, "note"); !note.empty()) out += "Note: " + md_text(note) + "\n\n";
    for (const json& d : array(k, "declined"))
      if (d.is_string()) out += "Declined: " + md_text(d.get<std::string>()) + "\n\n";
    const json& cs = array(k, "candidates");
    if (cs.empty()) {
      out += "No candidates.\n\n";
      continue;
    }
    std::vector<std::string> gates = gate_names(cs);
    std::vector<std::string> cols = {"Candidate", "Origin", "Description", "Hash", "Outcome"};
    if (measured) cols.push_back("Speedup");
    for (const auto& g : gates) cols.push_back(md_text(g));
    table_header(out, cols);
    std::vector<std::string> not_run;
    for (const json& c : cs) {
      if (text(c, "outcome") == "not_run") {  // no gate ran: named on one line below, not a row each
        not_run.push_back(md_text(text(c, "id")));
        continue;
      }
      std::string hash = text(c, "hash");
      if (hash.size() > 12) hash = hash.substr(0, 12);
      std::vector<std::string> row = {md_text(text(c, "id")), md_text(text(c, "origin")),
                                      md_code(text(c, "description")), md_code(hash), md_text(outcome_words(c))};
      if (measured) row.push_back(format_speedup(number(c, "speedup")));
      for (const auto& g : gates) row.push_back(gate_cell(c, g));
      table_row(out, row);
    }
    out += "\n";
    if (!not_run.empty()) out += fmt::format("Not run ({}): {}.\n\n", not_run.size(), join(not_run, ", "));
  }
}

// Each region of two launches or more (docs/ir.md, "Regions"): its kernels, what fusion made of it
// (the candidates with their gates, or why each strategy declined) and whether the result holds it.
void regions(std::string& out, const json& r, bool measured) {
  std::vector<const json*> rs;
  for (const json& x : array(r, "regions"))
    if (field(x, "fusion")) rs.push_back(&x);
  if (rs.empty()) return;
  out += "## Regions\n\nRuns of Triton launches between vendor calls; fusing one removes the round trips of its "
         "internal buffers through memory.\n\n";
  for (const json* x : rs) {
    const json& f = object(*x, "fusion");
    std::vector<std::string> kernels, internal;
    for (const json& k : array(*x, "kernels"))
      if (k.is_string()) kernels.push_back(md_code(k.get<std::string>(), false));
    for (const json& b : array(*x, "internal")) internal.push_back(md_code(text(b, "name"), false));
    out += fmt::format("### Graph {}: {}\n\n", format_count(*x, "graph"), join(kernels, " then "));
    out += fmt::format("Internal buffers: {}. Fusion {}{}.\n\n",
                       internal.empty() ? std::string(kDash) : join(internal, ", "),
                       boolean(f, "tried").value_or(false) ? "tried" : "not tried",
                       text(f, "chosen").empty() ? "" : ", chosen " + md_text(text(f, "chosen")));
    if (std::string note = text(f, "note"); !note.empty()) out += "Note: " + md_text(note) + "\n\n";
    for (const json& d : array(f, "declined"))
      if (d.is_string()) out += "Declined: " + md_text(d.get<std::string>()) + "\n\n";
    const json& cs = array(f, "candidates");
    if (cs.empty()) continue;
    std::vector<std::string> gates = gate_names(cs);
    std::vector<std::string> cols = {"Candidate", "Origin", "Description", "Fused kernel"};
    if (measured) cols.push_back("Speedup");
    for (const auto& g : gates) cols.push_back(md_text(g));
    table_header(out, cols);
    for (const json& c : cs) {
      std::vector<std::string> row = {md_text(text(c, "id")), md_text(text(c, "origin")),
                                      md_text(text(c, "description")), md_code(text(c, "kernel"))};
      if (measured) row.push_back(format_speedup(number(c, "speedup")));
      for (const auto& g : gates) row.push_back(gate_cell(c, g));
      table_row(out, row);
    }
    out += "\n";
  }
}

void end_to_end(std::string& out, const json& r) {
  const json& e2e = object(object(r, "module"), "end_to_end");
  if (e2e.empty()) return;
  out += "## End-to-end gate\n\n";
  out += fmt::format("{}: {}\n\n", md_text(text(e2e, "gate").empty() ? "E2E" : text(e2e, "gate")),
                     md_text(status_words(text(e2e, "status"))));
  if (const json* ev = field(e2e, "evidence")) {
    std::string body = clean(ev->dump(-1, ' ', false, json::error_handler_t::replace));
    size_t longest = 0, run = 0;
    for (char ch : body) longest = std::max(longest, run = ch == '`' ? run + 1 : 0);
    std::string fence(std::max<size_t>(3, longest + 1), '`');
    out += fence + "json\n" + body + "\n" + fence + "\n\n";
  }
}

// The LLM agents' part (docs/llm.md): per role, what the replies became and what they cost.
void llm_agents(std::string& out, const json& r) {
  const json& l = object(r, "llm");
  if (l.empty()) return;
  out += "## LLM agents\n\n";
  // A missing number is a dash, never 0 (docs/report.md).
  auto money = [](std::optional<double> v) { return v ? fmt::format("{:.4f}", *v) : std::string(kDash); };
  auto tokens = [](const json& v) {
    auto in = number(v, "input_tokens"), outn = number(v, "output_tokens");
    return in || outn ? fmt::format("{}", in.value_or(0) + outn.value_or(0)) : std::string(kDash);
  };
  out += fmt::format("{} · {}: {} exchange(s), {} HTTP request(s), {} not sent{}; {} input + {} output "
                     "tokens, cost {}. Transcripts: {}.\n\n",
                     md_text(text(l, "provider")), md_code(text(l, "model"), false), format_count(l, "exchanges"),
                     format_count(l, "http_requests"), format_count(l, "not_sent"),
                     boolean(object(l, "budget"), "spent").value_or(false) ? " (budget spent)" : "",
                     format_count(l, "input_tokens"), format_count(l, "output_tokens"), money(number(l, "cost")),
                     md_code(text(l, "transcripts"), false));
  table_header(out, {"role", "exchanges", "unparsable", "failed", "refused", "candidates", "rejected G1/G2/G3/G4",
                     "accepted", "chosen", "tokens", "cost"});
  for (const auto& [role, v] : object(l, "roles").items()) {
    const json& at = object(v, "rejected_at");
    table_row(out, {md_text(role), format_count(v, "exchanges"), format_count(v, "unparsable"),
                    format_count(v, "failed"), format_count(v, "refused"), format_count(v, "candidates"),
                    fmt::format("{}/{}/{}/{}", format_count(at, "G1"), format_count(at, "G2"), format_count(at, "G3"),
                                format_count(at, "G4")),
                    format_count(v, "accepted"), format_count(v, "chosen"),
                    tokens(v), money(number(v, "cost"))});
  }
  auto per = number(l, "cost_per_kernel_won");
  out += fmt::format("\nKernels won by an LLM candidate: {}; cost per kernel won: {}.\n\n", format_count(l, "kernels_won"),
                     money(per));
}

}  // namespace

std::string render_markdown(const json& r) {
  bool measured = performance_measured(r);
  std::string out;
  std::string bundle = text(r, "bundle");
  out += "# kernelopt report" + (bundle.empty() ? std::string() : ": " + md_code(bundle, false)) + "\n\n";
  headline(out, r, measured);
  if (std::string mem = memory_line(r); !mem.empty()) out += md_text(mem) + "\n\n";
  overview(out, r);
  stages(out, r);
  split(out, r, measured);
  kernels(out, r, measured);
  candidates(out, r, measured);
  regions(out, r, measured);
  llm_agents(out, r);
  end_to_end(out, r);
  return out;
}

}  // namespace kopt::report
