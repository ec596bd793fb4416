// kopt_render_report REPORT_JSON OUT_DIR: renders a report object the way
// `kernelopt optimize` does (report.json, report.md, report.html in OUT_DIR).
// A test tool (tests/python/test_report_html.py), not part of the product.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

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
    kopt::report::write_reports(nlohmann::json::parse(in), argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "kopt_render_report: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
