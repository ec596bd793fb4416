#include <utility>

#include "artifact/pyparse/ast.h"

namespace kopt::py {

Module::Module(std::string source, std::string filename) : source_(std::move(source)), filename_(std::move(filename)) {}

std::string_view Module::text(const Node* n) const {
  if (!n || n->begin.line == 0) return {};
  return std::string_view(source_).substr(n->begin.offset, n->end.offset - n->begin.offset);
}

std::string Module::print() const {
  std::string out;
  out.reserve(source_.size());
  for (const Token& t : tokens_) {
    out += t.trivia;
    out += t.text;
  }
  return out;
}

Node* Module::make(std::string_view type) {
  Node& n = arena_.emplace_back();
  n.type = type;
  return &n;
}

}  // namespace kopt::py
