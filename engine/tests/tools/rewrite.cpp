// kopt_rewrite BUNDLE KERNEL OUT_DIR: writes each source rewrite of one kernel of a
// bundle (agents/coder/rewrites/rewrites.h; no launches known, so none that needs them) to
// OUT_DIR/rewrite_N.py and prints [{"description", "file"}] as JSON, or the reasons
// every rewrite declined on stderr (exit 1). A test tool (tests/python/test_rewrites.py),
// not part of the product: the optimizer proposes the same candidates itself.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "agents/coder/rewrites/rewrites.h"
#include "artifact/bundle.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: kopt_rewrite BUNDLE KERNEL OUT_DIR\n";
    return 2;
  }
  try {
    auto b = kopt::ir::load_bundle(argv[1]);
    kopt::agents::KernelProfile p;
    for (const auto& g : b->graphs)
      if (!p.kernel) p.kernel = g->find_kernel(argv[2]);
    if (!p.kernel) {
      std::cerr << "kopt_rewrite: no kernel " << argv[2] << " in " << argv[1] << "\n";
      return 2;
    }
    std::string why;
    auto cands = kopt::agents::rewrites::candidates(p, &why);
    if (cands.empty()) {
      std::cerr << "kopt_rewrite: " << why << "\n";
      return 1;
    }
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < cands.size(); ++i) {
      std::filesystem::path f = std::filesystem::path(argv[3]) / ("rewrite_" + std::to_string(i + 1) + ".py");
      std::ofstream(f, std::ios::binary) << cands[i].source;
      out.push_back({{"description", cands[i].description}, {"file", f.string()}});
    }
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "kopt_rewrite: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
