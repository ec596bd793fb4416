#include "artifact/literal.h"

#include <charconv>
#include <string>

namespace kopt::ir {

using nlohmann::json;

std::optional<int64_t> int_literal(const py::Node* n) {
  if (!n) return std::nullopt;
  bool neg = false;
  if (n->is("UnaryOp") && n->ident("op") == "USub") {
    neg = true;
    n = n->child("operand");
    if (!n) return std::nullopt;
  }
  if (!n->is("Constant") || n->const_kind != py::ConstKind::Int) return std::nullopt;
  std::string digits;
  for (char c : n->value)
    if (c != '_') digits += c;
  int base = 10;
  std::string_view body = digits;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) base = 16, body.remove_prefix(2);
  else if (body.size() > 2 && body[0] == '0' && (body[1] == 'o' || body[1] == 'O')) base = 8, body.remove_prefix(2);
  else if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) base = 2, body.remove_prefix(2);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v, base);
  if (ec != std::errc() || p != body.data() + body.size()) return std::nullopt;  // out of range
  return neg ? -v : v;
}

std::string dotted_name(const py::Node* n) {
  if (!n) return "";
  if (n->is("Name")) return std::string(n->ident("id"));
  if (n->is("Attribute")) {
    std::string base = dotted_name(n->child("value"));
    return base.empty() ? "" : base + "." + std::string(n->ident("attr"));
  }
  return "";
}

bool is_tl_call(const py::Node* n, std::string_view fn) {
  if (!n || !n->is("Call")) return false;
  const py::Node* f = n->child("func");
  return f && f->is("Attribute") && f->ident("attr") == fn && dotted_name(f->child("value")) == "tl";
}

const py::Node* converted(const py::Node* n, const py::Node** dtype) {
  if (!n || !n->is("Call") || n->list("args").size() != 1 || !n->list("keywords").empty()) return nullptr;
  const py::Node* f = n->child("func");
  if (!f || !f->is("Attribute") || f->ident("attr") != "to") return nullptr;
  if (dtype) *dtype = n->list("args")[0];
  return f->child("value");
}

static json sequence(const py::Module& m, const std::vector<py::Node*>& elts) {
  json a = json::array();
  for (const py::Node* e : elts) a.push_back(literal_to_json(m, e));
  return a;
}

json literal_to_json(const py::Module& m, const py::Node* n) {
  if (!n) return nullptr;
  if (n->is("Constant")) {
    switch (n->const_kind) {
      case py::ConstKind::None: return nullptr;
      case py::ConstKind::True: return true;
      case py::ConstKind::False: return false;
      case py::ConstKind::Str: return n->value;
      case py::ConstKind::Int:
        if (auto v = int_literal(n)) return *v;
        return std::string(m.text(n));
      case py::ConstKind::Float: {
        std::string s;
        for (char c : n->value)
          if (c != '_') s += c;
        try {
          return std::stod(s);
        } catch (...) {
          return std::string(m.text(n));  // inf/overflow: keep the text
        }
      }
      default: return std::string(m.text(n));
    }
  }
  if (n->is("UnaryOp") && n->ident("op") == "USub") {
    json inner = literal_to_json(m, n->child("operand"));
    if (inner.is_number_integer()) return -inner.get<int64_t>();
    if (inner.is_number_float()) return -inner.get<double>();
    return std::string(m.text(n));
  }
  if (n->is("List") || n->is("Tuple") || n->is("Set")) return sequence(m, n->list("elts"));
  if (n->is("Dict")) {
    json o = json::object();
    const auto& keys = n->list("keys");
    const auto& values = n->list("values");
    for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
      const py::Node* k = keys[i];
      std::string key = (k && k->is("Constant") && k->const_kind == py::ConstKind::Str)
                            ? k->value
                            : (k ? std::string(m.text(k)) : "**");
      o[key] = literal_to_json(m, values[i]);
    }
    return o;
  }
  if (n->is("Call")) {
    std::string fn = dotted_name(n->child("func"));
    if (fn == "set" && n->list("args").empty()) return json::array();
    json o = json::object();
    o["__call__"] = fn.empty() ? std::string(m.text(n->child("func"))) : fn;
    if (!n->list("args").empty()) o["__args__"] = sequence(m, n->list("args"));
    for (const py::Node* kw : n->list("keywords")) {
      std::string key(kw->ident("arg"));
      o[key.empty() ? "**" : key] = literal_to_json(m, kw->child("value"));
    }
    return o;
  }
  return std::string(m.text(n));
}

}  // namespace kopt::ir
