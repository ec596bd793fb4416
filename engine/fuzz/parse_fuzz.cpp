// libFuzzer target for the Python parser: arbitrary bytes must either parse or
// throw ParseError — never crash, hang or leak — and a successful parse must
// reprint byte-identically and dump without trouble.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "artifact/pyparse/ast.h"

namespace {

// Every positioned node must cover a valid slice of the source whose offsets
// agree with its line/col (so Module::text() is safe for consumers).
void check_positions(const kopt::py::Module& m) {
  std::vector<const kopt::py::Node*> stack{m.root()};
  const size_t size = m.source().size();
  while (!stack.empty()) {
    const kopt::py::Node* n = stack.back();
    stack.pop_back();
    if (n->begin.line != 0) {
      if (n->begin.offset > n->end.offset || n->end.offset > size) std::abort();
      if (n->begin.col > n->begin.offset) std::abort();
      (void)m.text(n);
    }
    for (const auto& f : n->fields) {
      if (f.kind == kopt::py::Field::Kind::Child) stack.push_back(f.child);
      for (const auto* c : f.list)
        if (c) stack.push_back(c);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string src(reinterpret_cast<const char*>(data), size);
  try {
    auto m = kopt::py::parse(src, "fuzz.py");
    if (m->print() != src) std::abort();
    std::string d = kopt::py::dump(m->root());
    if (d.empty()) std::abort();
    check_positions(*m);
  } catch (const kopt::py::ParseError& e) {
    if (e.line == 0 && size > 0) std::abort();  // every error must point somewhere
  }
  return 0;
}
