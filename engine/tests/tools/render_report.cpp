// kopt_render_report REPORT_JSON OUT_DIR: renders a report object the way
// `kernelopt optimize` does (report.json, report.md, report.html in OUT_DIR), or a
// bench object (format "kernelopt-bench") the way `kernelopt bench` does (results.jsonl,
// report.md, report.html; its levels summarized from its rows, as the suite runner does).
// A test tool (tests/python/test_report_html.py), not part of the product.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/table.h"
#include "report/bench_report.h"
#include "report/report.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kopt_render_report REPORT_JSON OUT_DIR\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "kopt_render_report: cannot read " << argv[1] << "\n";
    return 2;
  }
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("format", "") == "kernelopt-bench") {
      std::vector<nlohmann::json> rows(j["rows"].begin(), j["rows"].end());
      j["levels"] = kopt::bench::summarize(rows);
      std::filesystem::create_directories(argv[2]);
      kopt::report::write_bench_outputs(j, argv[2]);
    } else {
      kopt::report::write_reports(j, argv[2]);
    }
  } catch (const std::exception& e) {
    std::cerr << "kopt_render_report: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
