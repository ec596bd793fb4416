#include "verify/static/static_util.h"

#include <fmt/format.h>

#include "artifact/literal.h"

namespace kopt::verify {

std::string at(const py::Node* n) {
  if (!n || n->begin.line == 0) return "line ?";
  return fmt::format("line {}:{}", n->begin.line, n->begin.col + 1);
}

ImportMap import_map(const py::Node* module) {
  ImportMap m;
  for (const py::Node* st : module->list("body")) {
    if (st->is("Import")) {
      for (const py::Node* a : st->list("names")) {
        std::string name(a->ident("name")), as(a->ident("asname"));
        if (!as.empty()) m[as] = name;
        else m[name.substr(0, name.find('.'))] = name.substr(0, name.find('.'));  // `import a.b` binds `a`
      }
    } else if (st->is("ImportFrom")) {
      std::string mod(st->ident("module"));
      for (const py::Node* a : st->list("names")) {
        std::string name(a->ident("name")), as(a->ident("asname"));
        m[as.empty() ? name : as] = mod + "." + name;
      }
    }
  }
  return m;
}

std::string qualified_name(const py::Node* n, const ImportMap& imports) {
  std::string d = ir::dotted_name(n);
  if (d.empty()) return d;
  size_t dot = d.find('.');
  auto it = imports.find(std::string_view(d).substr(0, dot));
  if (it == imports.end()) return d;
  return dot == std::string::npos ? it->second : it->second + d.substr(dot);
}

void Problems::add(const py::Node* where, std::string what) { items_.push_back(at(where) + ": " + what); }

Finding Problems::finding(std::string check, std::string ok_message) const {
  constexpr size_t kShown = 8;
  if (items_.empty()) return {std::move(check), true, std::move(ok_message)};
  std::string msg;
  for (size_t i = 0; i < items_.size() && i < kShown; ++i) msg += (i ? "\n" : "") + items_[i];
  if (items_.size() > kShown) msg += fmt::format("\n... and {} more", items_.size() - kShown);
  return {std::move(check), false, std::move(msg)};
}

}  // namespace kopt::verify
