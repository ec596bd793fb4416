#include "artifact/pyparse/lexer.h"

#include <cstdio>
#include <cstring>

namespace kopt::py {
namespace {

constexpr size_t kMaxBrackets = 200;    // CPython's MAXLEVEL
constexpr size_t kMaxIndents = 100;     // CPython's MAXINDENT
constexpr size_t kMaxIntDigits = 4300;  // CPython's int/str conversion limit; keeps dump() linear

bool is_id_start(unsigned char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}
bool is_id_char(unsigned char c) { return is_id_start(c) || (c >= '0' && c <= '9'); }
bool is_digit_of(char c, int base) {
  if (base == 16) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
  return c >= '0' && c < '0' + base;
}

bool is_string_prefix(std::string_view w) {
  if (w.size() > 2) return false;
  std::string low;
  for (char c : w) low += static_cast<char>(c | 0x20);
  return low == "r" || low == "u" || low == "b" || low == "f" || low == "br" || low == "rb" || low == "fr" ||
         low == "rf";
}

// Longest-match operator table, longest first.
constexpr std::string_view kOps1 = "+-*/%@&|^~<>()[]{},:;.=";

// Length of the longest operator at the start of `r` (0: none). Written as
// character tests rather than a table scan: the lexer calls it for every
// operator token, and kernel sources are dense with them.
size_t op_length(std::string_view r) {
  const char a = r[0], b = r.size() > 1 ? r[1] : 0, c = r.size() > 2 ? r[2] : 0;
  const bool doubled = a == b && (a == '*' || a == '/' || a == '<' || a == '>');
  if ((doubled && c == '=') || (a == '.' && b == '.' && c == '.')) return 3;      // **= //= <<= >>= ...
  if (doubled || (a == '-' && b == '>')) return 2;                                // ** // << >> ->
  if (b == '=' && std::string_view("<>=!+-*/%&|^@:").find(a) != std::string_view::npos) return 2;  // <= == := ...
  return kOps1.find(a) != std::string_view::npos ? 1 : 0;
}

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& file, std::vector<Token>& out, size_t begin, size_t end,
        uint32_t line, size_t line_start, bool fragment)
      : src_(src), file_(file), out_(out), pos_(begin), end_(end), line_(line), line_start_(line_start),
        last_end_(begin), fragment_(fragment) {}

  void run_file() {
    out_.reserve(src_.size() / 3 + 16);
    if (src_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = line_start_ = 3;  // BOM: trivia, not a column
    bool at_bol = true;
    while (true) {
      if (at_bol && brackets_.empty()) {
        if (!indentation()) break;  // only blank lines/comments remain
        at_bol = false;
      }
      skip_trivia();
      if (pos_ >= end_) break;
      if (size_t nl = newline_len(pos_)) {
        if (brackets_.empty()) {
          emit(Token::Kind::Newline, pos_, pos_ + nl);
          at_bol = true;
        }
        pos_ += nl;
        new_line(pos_);
        continue;
      }
      lex_token();
    }
    if (!brackets_.empty()) unclosed();
    if (!at_bol) emit(Token::Kind::Newline, end_, end_);  // file without final newline
    for (size_t i = 1; i < indents_.size(); ++i) emit(Token::Kind::Dedent, end_, end_);
    emit(Token::Kind::EndMarker, end_, end_);
  }

  void run_fragment() {
    brackets_.push_back({'(', here(pos_)});  // virtual bracket: newlines are trivia
    while (true) {
      skip_trivia();
      if (pos_ >= end_) break;
      if (size_t nl = newline_len(pos_)) {
        pos_ += nl;
        new_line(pos_);
        continue;
      }
      lex_token();
    }
    if (brackets_.size() > 1) unclosed();
    emit(Token::Kind::EndMarker, end_, end_);
  }

 private:
  struct Bracket {
    char ch;
    Loc at;
  };

  Loc here(size_t off) const {
    return Loc{line_, static_cast<uint32_t>(off - line_start_), static_cast<uint32_t>(off)};
  }
  [[noreturn]] void fail(Loc at, std::string msg) const { throw ParseError(file_, at.line, at.col, std::move(msg)); }
  [[noreturn]] void unclosed() const {
    const Bracket& b = brackets_.back();
    fail(b.at, std::string("'") + b.ch + "' was never closed");
  }

  size_t newline_len(size_t p) const {
    if (p >= end_) return 0;
    if (src_[p] == '\n') return 1;
    if (src_[p] == '\r') return p + 1 < end_ && src_[p + 1] == '\n' ? 2 : 1;
    return 0;
  }
  void new_line(size_t start) {
    ++line_;
    line_start_ = start;
  }

  void emit(Token::Kind k, size_t s, size_t e, Loc b) {
    out_.push_back(Token{k, src_.substr(last_end_, s - last_end_), src_.substr(s, e - s), b, here(e)});
    last_end_ = e;
  }
  void emit(Token::Kind k, size_t s, size_t e) { emit(k, s, e, here(s)); }

  // Measures the indentation of the next non-blank line and emits INDENT/DEDENT.
  // Blank and comment-only lines are skipped (they become trivia). Returns false at EOF.
  bool indentation() {
    while (true) {
      int col = 0, alt = 0;  // alt: tab size 1, to detect tab/space ambiguity like CPython
      size_t q = pos_;
      for (; q < end_; ++q) {
        char c = src_[q];
        if (c == ' ') {
          ++col, ++alt;
        } else if (c == '\t') {
          col = (col / 8 + 1) * 8, ++alt;
        } else if (c == '\f') {
          col = alt = 0;
        } else {
          break;
        }
      }
      if (q < end_ && src_[q] == '#')
        while (q < end_ && src_[q] != '\n' && src_[q] != '\r') ++q;
      if (q >= end_) return false;
      if (size_t nl = newline_len(q)) {
        pos_ = q + nl;
        new_line(pos_);
        continue;
      }
      pos_ = q;
      Loc at = here(q);
      if (col > indents_.back()) {
        if (alt <= alts_.back()) fail(at, "inconsistent use of tabs and spaces in indentation");
        if (indents_.size() >= kMaxIndents) fail(at, "too many levels of indentation");
        indents_.push_back(col);
        alts_.push_back(alt);
        emit(Token::Kind::Indent, q, q);
      } else {
        while (col < indents_.back()) {
          indents_.pop_back();
          alts_.pop_back();
          emit(Token::Kind::Dedent, q, q);
        }
        if (col != indents_.back()) fail(at, "unindent does not match any outer indentation level");
        if (alt != alts_.back()) fail(at, "inconsistent use of tabs and spaces in indentation");
      }
      return true;
    }
  }

  // Spaces, comments and backslash continuations between tokens.
  void skip_trivia() {
    while (pos_ < end_) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < end_ && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
      } else if (c == '\\') {
        size_t nl = newline_len(pos_ + 1);
        if (pos_ + 1 >= end_) fail(here(pos_), "unexpected EOF after line continuation character");
        if (!nl) fail(here(pos_), "unexpected character after line continuation character");
        pos_ += 1 + nl;
        new_line(pos_);
      } else {
        break;
      }
    }
  }

  void lex_token() {
    unsigned char c = src_[pos_];
    if (is_id_start(c)) {
      size_t q = pos_;
      while (q < end_ && is_id_char(src_[q])) ++q;
      if (q < end_ && (src_[q] == '\'' || src_[q] == '"') && is_string_prefix(src_.substr(pos_, q - pos_))) {
        lex_string(q);
      } else {
        emit(Token::Kind::Name, pos_, q);
        pos_ = q;
      }
    } else if ((c >= '0' && c <= '9') || (c == '.' && pos_ + 1 < end_ && src_[pos_ + 1] >= '0' && src_[pos_ + 1] <= '9')) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string(pos_);
    } else {
      lex_op();
    }
  }

  void lex_string(size_t qpos) {
    const size_t start = pos_;
    const Loc b = here(start);
    const char q = src_[qpos];
    const bool triple = qpos + 2 < end_ && src_[qpos + 1] == q && src_[qpos + 2] == q;
    size_t p = qpos + (triple ? 3 : 1);
    while (true) {
      if (p >= end_)
        fail(b, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      char c = src_[p];
      if (c == '\\') {
        ++p;
        if (size_t nl = newline_len(p)) {
          p += nl;
          new_line(p);
        } else if (p < end_) {
          ++p;
        }
      } else if (size_t nl = newline_len(p)) {
        if (!triple)
          fail(b, "unterminated string literal (detected at line " + std::to_string(line_) + ")");
        p += nl;
        new_line(p);
      } else if (c == q) {
        if (!triple) {
          ++p;
          break;
        }
        if (p + 2 < end_ && src_[p + 1] == q && src_[p + 2] == q) {
          p += 3;
          break;
        }
        ++p;
      } else {
        ++p;
      }
    }
    emit(Token::Kind::String, start, p, b);
    pos_ = p;
  }

  // Digits of `base` with single underscores between them; returns the digit count.
  size_t digits(size_t& p, int base) {
    size_t n = 0;
    while (p < end_) {
      if (is_digit_of(src_[p], base)) {
        ++p, ++n;
      } else if (src_[p] == '_' && n > 0 && p + 1 < end_ && is_digit_of(src_[p + 1], base)) {
        ++p;
      } else {
        break;
      }
    }
    return n;
  }

  void lex_number() {
    const Loc b = here(pos_);
    size_t p = pos_;
    char c1 = p + 1 < end_ ? static_cast<char>(src_[p + 1] | 0x20) : 0;
    bool is_int = true;
    size_t ndigits = 0;
    if (src_[p] == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
      p += 2;
      if (p < end_ && src_[p] == '_') ++p;  // 0x_1f is valid
      ndigits = digits(p, c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2);
      if (ndigits == 0) fail(b, "invalid number literal");
    } else {
      ndigits = digits(p, 10);
      if (p < end_ && src_[p] == '.') {
        is_int = false;
        ++p;
        digits(p, 10);
      }
      if (p < end_ && (src_[p] | 0x20) == 'e') {
        size_t q = p + 1;
        if (q < end_ && (src_[q] == '+' || src_[q] == '-')) ++q;
        if (digits(q, 10) == 0) fail(here(p), "invalid decimal literal");
        is_int = false;
        p = q;
      }
      if (p < end_ && (src_[p] | 0x20) == 'j') {
        is_int = false;
        ++p;
      }
      if (is_int) {
        std::string_view t = src_.substr(pos_, p - pos_);
        if (t[0] == '0' && t.find_first_not_of("0_") != std::string_view::npos)
          fail(b, "leading zeros in decimal integer literals are not permitted");
      }
    }
    if (is_int && ndigits > kMaxIntDigits) fail(b, "integer literal too long (more than 4300 digits)");
    emit(Token::Kind::Number, pos_, p, b);
    pos_ = p;
  }

  void lex_op() {
    std::string_view rest = src_.substr(pos_, end_ - pos_);
    const size_t len = op_length(rest);
    const char c = rest[0];
    const Loc at = here(pos_);
    if (!len) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%02X", u);
        fail(at, std::string("invalid non-printable character U+00") + buf);
      }
      fail(at, std::string("invalid character '") + c + "'");
    }
    if (len == 1 && (c == '(' || c == '[' || c == '{')) {
      if (brackets_.size() >= kMaxBrackets) fail(at, "too many nested parentheses");
      brackets_.push_back({c, at});
    } else if (len == 1 && (c == ')' || c == ']' || c == '}')) {
      const char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      // In a fragment the bottom bracket is the virtual one around the expression.
      if (brackets_.size() <= (fragment_ ? 1u : 0u))
        fail(at, std::string("unmatched '") + c + "'");
      if (brackets_.back().ch != open)
        fail(at, std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" +
                     brackets_.back().ch + "'");
      brackets_.pop_back();
    }
    emit(Token::Kind::Op, pos_, pos_ + len, at);
    pos_ += len;
  }

  std::string_view src_;
  const std::string& file_;
  std::vector<Token>& out_;
  size_t pos_, end_;
  uint32_t line_;
  size_t line_start_;
  size_t last_end_;
  bool fragment_;
  std::vector<Bracket> brackets_;
  std::vector<int> indents_{0}, alts_{0};
};

}  // namespace

void validate_utf8(std::string_view s, const std::string& file) {
  auto fail = [&](size_t at, const std::string& msg) {
    uint32_t line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < at; ++i)
      if (s[i] == '\n' || (s[i] == '\r' && (i + 1 >= at || s[i + 1] != '\n'))) line++, ls = i + 1;
    throw ParseError(file, line, static_cast<uint32_t>(at - ls), msg);
  };
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0, n = s.size(); i < n;) {
    // Fast path: eight ASCII bytes, none of them NUL, at a time (sources are almost all ASCII).
    if (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, u + i, 8);
      const uint64_t has_zero = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
      if (!(w & 0x8080808080808080ull) && !has_zero) {
        i += 8;
        continue;
      }
    }
    unsigned char c = u[i];
    if (c < 0x80) {
      if (c == 0) fail(i, "source code cannot contain null bytes");
      ++i;
      continue;
    }
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (c > 0xF4) len = 0;
    bool ok = len && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (u[i + k] & 0xC0) == 0x80;
    // Overlong forms, UTF-16 surrogates and code points above U+10FFFF.
    if (ok && c == 0xE0 && u[i + 1] < 0xA0) ok = false;
    if (ok && c == 0xED && u[i + 1] >= 0xA0) ok = false;
    if (ok && c == 0xF0 && u[i + 1] < 0x90) ok = false;
    if (ok && c == 0xF4 && u[i + 1] >= 0x90) ok = false;
    if (!ok) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%02x", c);
      fail(i, std::string("invalid UTF-8: byte 0x") + buf);
    }
    i += len;
  }
}

void tokenize(std::string_view src, const std::string& file, std::vector<Token>& out) {
  Lexer lx(src, file, out, 0, src.size(), 1, 0, false);
  lx.run_file();
}

void tokenize_fragment(std::string_view src, size_t begin, size_t end, uint32_t line, size_t line_start,
                       const std::string& file, std::vector<Token>& out) {
  Lexer lx(src, file, out, begin, end, line, line_start, true);
  lx.run_fragment();
}

}  // namespace kopt::py
