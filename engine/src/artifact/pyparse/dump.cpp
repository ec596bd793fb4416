// The normalized dump compared against tools/pyast_dump.py (format: docs/parser.md).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "artifact/pyparse/ast.h"

namespace kopt::py {
namespace {

// Python's repr() of a float: shortest round-trip digits, positional notation
// iff -4 <= exponent < 16, otherwise d[.ddd]e+XX with at least two exponent digits.
std::string float_repr(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.remove_prefix(1);
  }
  const size_t e = s.find('e');
  std::string digits(s.substr(0, e));
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  const int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  std::string out = sign;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += ebuf;
  }
  return out;
}

std::string strip_underscores(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += c;
  return out;
}

// Integer literal (any base, underscores) to decimal. Literals are capped at
// 4300 digits by the lexer, so the quadratic base conversion stays cheap.
std::string int_decimal(std::string_view text) {
  std::string s = strip_underscores(text);
  int base = 10;
  if (s.size() > 1 && s[0] == '0' && (s[1] | 0x20) != '0' && !(s[1] >= '0' && s[1] <= '9')) {
    char b = static_cast<char>(s[1] | 0x20);
    base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
    s = s.substr(2);
  }
  if (base == 10) {
    size_t nz = s.find_first_not_of('0');
    return nz == std::string::npos ? "0" : s.substr(nz);
  }
  std::vector<uint32_t> limbs;  // little-endian, base 1e9
  for (char c : s) {
    uint64_t carry = static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    for (uint32_t& l : limbs) {
      uint64_t v = static_cast<uint64_t>(l) * static_cast<uint64_t>(base) + carry;
      l = static_cast<uint32_t>(v % 1000000000u);
      carry = v / 1000000000u;
    }
    if (carry) limbs.push_back(static_cast<uint32_t>(carry));
  }
  if (limbs.empty()) return "0";
  std::string out = std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%09u", limbs[i]);
    out += buf;
  }
  return out;
}

double parse_float(std::string_view text) { return std::strtod(strip_underscores(text).c_str(), nullptr); }

// json.dumps(s) with ensure_ascii: \uXXXX (surrogate pairs above the BMP) for
// anything outside printable ASCII. Input is UTF-8, possibly with encoded lone surrogates.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0xF0) {
      cp = c & 0x07, len = 4;
    } else if (c >= 0xE0) {
      cp = c & 0x0F, len = 3;
    } else if (c >= 0xC0) {
      cp = c & 0x1F, len = 2;
    }
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp < 0x7F) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else {
      cp -= 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      out += buf;
    }
  }
  return out + "\"";
}

std::string constant_value(const Node* n) {
  switch (n->const_kind) {
    case ConstKind::None: return "None";
    case ConstKind::True: return "True";
    case ConstKind::False: return "False";
    case ConstKind::Ellipsis: return "Ellipsis";
    case ConstKind::Int: return "int " + int_decimal(n->value);
    case ConstKind::Float: return "float " + float_repr(parse_float(n->value));
    case ConstKind::Complex:
      return "complex " + float_repr(parse_float(std::string_view(n->value).substr(0, n->value.size() - 1))) + "j";
    case ConstKind::Str: return "str " + json_string(n->value);
    case ConstKind::Bytes: {
      std::string out = "bytes ";
      char buf[4];
      for (unsigned char c : n->value) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
      }
      return out;
    }
  }
  return "?";
}

void dump_node(const Node* n, int indent, std::string_view prefix, std::string& out);

void dump_value(const Field& f, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  const std::string prefix = std::string(f.name) + ": ";
  switch (f.kind) {
    case Field::Kind::Null: out += pad + prefix + "None\n"; break;
    case Field::Kind::Ident: out += pad + prefix + std::string(f.ident) + "\n"; break;
    case Field::Kind::Int: out += pad + prefix + std::to_string(f.integer) + "\n"; break;
    case Field::Kind::Child: dump_node(f.child, indent, prefix, out); break;
    case Field::Kind::List:
      if (f.list.empty()) {
        out += pad + prefix + "[]\n";
        break;
      }
      out += pad + prefix + "[\n";
      for (const Node* c : f.list) {
        if (c) {
          dump_node(c, indent + 1, "- ", out);
        } else {
          out += pad + "  - None\n";
        }
      }
      out += pad + "]\n";
      break;
  }
}

void dump_node(const Node* n, int indent, std::string_view prefix, std::string& out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  out += prefix;
  out += n->type;
  if (n->begin.line) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %u:%u-%u:%u", n->begin.line, n->begin.col, n->end.line, n->end.col);
    out += buf;
  }
  out += '\n';
  if (n->is("Constant")) {
    out.append(static_cast<size_t>(indent + 1) * 2, ' ');
    out += "value: " + constant_value(n) + "\n";
  }
  for (const Field& f : n->fields) dump_value(f, indent + 1, out);
}

}  // namespace

std::string dump(const Node* n) {
  std::string out;
  if (n) dump_node(n, 0, "", out);
  return out;
}

}  // namespace kopt::py
