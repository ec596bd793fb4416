// `kernelopt parse FILE [--dump] [--print]`, as a function the CLI wires up.
#pragma once

#include <ostream>
#include <string>

namespace kopt::py {

// Parses `path`; writes dump() and/or print() of it to `out` (dump first when
// both). Returns 0 on success, 2 on a ParseError (one `file:line:col: message`
// line on `err`), 2 also when the file cannot be read.
int run_parse_command(const std::string& path, bool dump, bool print, std::ostream& out, std::ostream& err);

}  // namespace kopt::py
