// `kernelopt parse FILE [--dump] [--print]`: the parser on its own, used by the
// differential test against CPython and for debugging.
#include <iostream>

#include "artifact/pyparse/cli_parse.h"
#include "cli/commands.h"

namespace kopt::cli {

int parse(const ParseOptions& o) { return py::run_parse_command(o.file, o.dump, o.print, std::cout, std::cerr); }

}  // namespace kopt::cli
