#include "artifact/pyparse/cli_parse.h"

#include <fstream>
#include <sstream>

#include "artifact/pyparse/ast.h"

namespace kopt::py {

int run_parse_command(const std::string& path, bool dump_tree, bool print_source, std::ostream& out,
                      std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "kernelopt: error: " << path << ": cannot read file; check the path\n";
    return 2;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  try {
    auto m = parse(std::move(buf).str(), path);
    if (dump_tree) out << dump(m->root());
    if (print_source) out << m->print();
  } catch (const ParseError& e) {
    err << "kernelopt: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace kopt::py
