// String literals: prefixes, escapes, implicit concatenation and f-strings, as
// CPython 3.11 (pre-PEP 701) builds them. Every Constant/FormattedValue/JoinedStr
// made from an f-string gets the span of the whole concatenation (CPython does
// the same); only the expressions inside replacement fields get real positions.
#include <algorithm>

#include "artifact/pyparse/lexer.h"
#include "artifact/pyparse/parser.h"

namespace kopt::py {
namespace {

struct Prefix {
  size_t len = 0, quote = 1;  // prefix length and quote length (1 or 3)
  bool raw = false, bytes = false, fstr = false;
};

Prefix prefix_of(std::string_view text) {
  Prefix p;
  while (text[p.len] != '\'' && text[p.len] != '"') {
    char c = static_cast<char>(text[p.len] | 0x20);
    p.raw |= c == 'r';
    p.bytes |= c == 'b';
    p.fstr |= c == 'f';
    ++p.len;
  }
  const char q = text[p.len];
  if (text.size() >= p.len + 6 && text[p.len + 1] == q && text[p.len + 2] == q) p.quote = 3;
  return p;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {  // includes lone surrogates from \ud800-style escapes, as CPython allows
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r' || c == '\v'; }

}  // namespace

struct Parser::FString {
  Loc begin, end;     // span of the whole concatenation
  bool u_kind;        // CPython: kind='u' iff the first token starts with a lowercase 'u'
  std::string buf;    // literal text not yet turned into a Constant
};

// Decodes one literal body into `out`: newlines normalized to \n (CPython
// translates the source first), escapes processed unless raw.
void Parser::decode(std::string& out, std::string_view body, bool raw, bool bytes, Loc at) const {
  out.reserve(out.size() + body.size());
  for (size_t i = 0, n = body.size(); i < n;) {
    // Fast path: copy the run of plain characters up to the next one that needs care
    // (kernel sources are long literals with no escapes at all).
    size_t plain = i;
    while (plain < n && body[plain] != '\\' && body[plain] != '\r' && (!bytes || static_cast<unsigned char>(body[plain]) < 0x80))
      ++plain;
    if (plain > i) {
      out.append(body.data() + i, plain - i);
      i = plain;
      continue;
    }
    const char c = body[i];
    if (c == '\r') {
      out += '\n';
      i += i + 1 < n && body[i + 1] == '\n' ? 2 : 1;
      continue;
    }
    if (bytes && static_cast<unsigned char>(c) >= 0x80) fail_at(at, "bytes can only contain ASCII literal characters");
    if (c != '\\' || raw || i + 1 >= n) {
      out += c;
      ++i;
      continue;
    }
    const char e = body[i + 1];
    i += 2;
    auto hex = [&](int count) {
      uint32_t v = 0;
      for (int k = 0; k < count; ++k, ++i) {
        int d = i < n ? hex_value(body[i]) : -1;
        if (d < 0) fail_at(at, std::string("truncated \\") + e + " escape");
        v = v * 16 + static_cast<uint32_t>(d);
      }
      return v;
    };
    switch (e) {
      case '\n': break;  // backslash-newline: line continuation inside the literal
      case '\r':
        if (i < n && body[i] == '\n') ++i;
        break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        uint32_t v = static_cast<uint32_t>(e - '0');
        for (int k = 0; k < 2 && i < n && body[i] >= '0' && body[i] <= '7'; ++k, ++i)
          v = v * 8 + static_cast<uint32_t>(body[i] - '0');
        if (bytes) {
          out += static_cast<char>(v & 0xFF);
        } else {
          append_utf8(out, v);
        }
        break;
      }
      case 'x': {
        uint32_t v = hex(2);
        if (bytes) {
          out += static_cast<char>(v);
        } else {
          append_utf8(out, v);
        }
        break;
      }
      case 'u':
      case 'U':
        if (bytes) {
          out += '\\';
          i -= 1;
          break;
        } else {
          uint32_t v = hex(e == 'u' ? 4 : 8);
          if (v > 0x10FFFF) fail_at(at, "illegal Unicode character in \\U escape");
          append_utf8(out, v);
          break;
        }
      case 'N':
        if (!bytes) fail_at(at, "\\N{...} escapes are not supported");
        [[fallthrough]];
      default:  // unknown escape: CPython keeps the backslash (with a DeprecationWarning)
        out += '\\';
        i -= 1;
    }
  }
}

Loc Parser::loc_in(const Token& t, size_t off) const {
  Loc l = t.begin;
  size_t line_start = t.begin.offset - t.begin.col;
  for (size_t p = t.begin.offset; p < off; ++p) {
    if (src_[p] == '\n' || (src_[p] == '\r' && (p + 1 >= src_.size() || src_[p + 1] != '\n'))) {
      ++l.line;
      line_start = p + 1;
    }
  }
  l.col = static_cast<uint32_t>(off - line_start);
  l.offset = static_cast<uint32_t>(off);
  return l;
}

Node* Parser::strings() {
  const size_t first = pos_;
  size_t last = pos_;
  bool any_f = false, any_bytes = false, any_str = false;
  for (size_t i = pos_; i < n_ && toks_[i].kind == Token::Kind::String; ++i) {
    Prefix p = prefix_of(toks_[i].text);
    any_f |= p.fstr;
    (p.bytes ? any_bytes : any_str) = true;
    last = i;
  }
  const Loc b = toks_[first].begin;
  if (any_bytes && any_str) fail_at(b, "cannot mix bytes and nonbytes literals");
  const bool u_kind = toks_[first].text[0] == 'u';
  if (!any_f) {
    Node* n = node("Constant", b, 1);
    n->const_kind = any_bytes ? ConstKind::Bytes : ConstKind::Str;
    for (size_t i = first; i <= last; ++i) {
      const Token& t = toks_[i];
      Prefix p = prefix_of(t.text);
      decode(n->value, t.text.substr(p.len + p.quote, t.text.size() - p.len - 2 * p.quote), p.raw, p.bytes, t.begin);
      advance();
    }
    if (u_kind) {
      add_ident(n, "kind", "u");
    } else {
      add_null(n, "kind");
    }
    return done(n);
  }
  FString st{b, toks_[last].end, u_kind, {}};
  std::vector<Node*> values;
  for (size_t i = first; i <= last; ++i) {
    const Token& t = toks_[i];
    Prefix p = prefix_of(t.text);
    const size_t body = t.begin.offset + p.len + p.quote, body_end = t.end.offset - p.quote;
    if (p.fstr) {
      fstring_body(t, body, body_end, p.raw, 0, st, values);
    } else {
      decode(st.buf, src_.substr(body, body_end - body), p.raw, false, t.begin);
    }
    advance();
  }
  flush(st, values, st.begin, st.end);
  Node* j = node("JoinedStr", b, 1);
  add(j, "values", std::move(values));
  return done(j);
}

void Parser::flush(FString& st, std::vector<Node*>& values, Loc begin, Loc end) {
  if (st.buf.empty()) return;
  Node* c = node("Constant", begin, 1);
  c->end = end;
  c->const_kind = ConstKind::Str;
  c->value = std::move(st.buf);
  st.buf.clear();
  if (st.u_kind) {
    add_ident(c, "kind", "u");
  } else {
    add_null(c, "kind");
  }
  values.push_back(c);
}

// Literal text and replacement fields of src[i, end). At level 0 that is a whole
// f-string body; at level 1 a format spec, which stops at its closing '}'.
size_t Parser::fstring_body(const Token& t, size_t i, size_t end, bool raw, int level, FString& st,
                            std::vector<Node*>& values) {
  size_t lit = i;
  auto take_literal = [&](size_t upto) { decode(st.buf, src_.substr(lit, upto - lit), raw, false, t.begin); };
  while (i < end) {
    const char c = src_[i];
    if (c == '\\' && !raw) {
      if (i + 2 < end && src_[i + 1] == 'N' && src_[i + 2] == '{') {
        fail_at(t.begin, "\\N{...} escapes are not supported");
      }
      // A backslash never escapes a brace: f'\{x}' is a backslash then a field.
      i += i + 1 < end && src_[i + 1] != '{' && src_[i + 1] != '}' ? 2 : 1;
      continue;
    }
    if (c == '{' || c == '}') {
      if (level == 0 && i + 1 < end && src_[i + 1] == c) {  // doubled brace (top level only, like CPython)
        take_literal(i + 1);
        i += 2;
        lit = i;
        continue;
      }
      if (c == '}') {
        if (level == 0) fail_at(loc_in(t, i), "f-string: single '}' is not allowed");
        take_literal(i);
        return i;
      }
      take_literal(i);
      i = fstring_field(t, i, end, raw, level, st, values);
      lit = i;
      continue;
    }
    ++i;
  }
  if (level > 0) fail_at(t.begin, "f-string: expecting '}'");
  take_literal(end);
  return end;
}

// One replacement field starting at '{'; returns the index after its '}'.
size_t Parser::fstring_field(const Token& t, size_t i, size_t end, bool raw, int level, FString& st,
                             std::vector<Node*>& values) {
  const size_t lbrace = i++;
  const size_t expr_begin = i;
  // Find where the expression ends, skipping nested brackets and strings (CPython's fstring_find_expr).
  int depth = 0;
  char quote = 0;
  bool triple = false;
  while (true) {
    if (i >= end) fail_at(t.begin, "f-string: expecting '}'");
    const char c = src_[i];
    if (c == '\\') fail_at(t.begin, "f-string expression part cannot include a backslash");
    if (quote) {
      if (c == quote && (!triple || (i + 2 < end && src_[i + 1] == quote && src_[i + 2] == quote))) {
        i += triple ? 3 : 1;
        quote = 0;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      triple = i + 2 < end && src_[i + 1] == c && src_[i + 2] == c;
      quote = c;
      i += triple ? 3 : 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        if (c == '}') break;
        fail_at(t.begin, std::string("f-string: unmatched '") + c + "'");
      }
      --depth;
    } else if (c == '#') {
      fail_at(t.begin, "f-string expression part cannot include '#'");
    } else if (depth == 0 && (c == '!' || c == ':' || c == '=' || c == '<' || c == '>')) {
      if (c != ':' && i + 1 < end && src_[i + 1] == '=') {  // != == <= >=
        i += 2;
        continue;
      }
      if (c != '<' && c != '>') break;
    }
    ++i;
  }
  if (quote) fail_at(t.begin, "f-string: unterminated string");
  const size_t expr_end = i;
  if (std::all_of(src_.begin() + expr_begin, src_.begin() + expr_end, is_space))
    fail_at(t.begin, "f-string: empty expression not allowed");
  std::string_view debug;
  if (src_[i] == '=') {  // self-documenting f'{x=}'
    for (++i; i < end && is_space(src_[i]);) ++i;
    debug = src_.substr(expr_begin, i - expr_begin);
  }
  int64_t conversion = -1;
  if (i < end && src_[i] == '!') {
    ++i;
    if (i >= end || (src_[i] != 's' && src_[i] != 'r' && src_[i] != 'a'))
      fail_at(t.begin, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    conversion = src_[i++];
  }
  Node* spec = nullptr;
  if (i < end && src_[i] == ':') {
    if (level >= 1) fail_at(t.begin, "f-string: expressions nested too deeply");
    FString sub{st.begin, st.end, st.u_kind, {}};
    std::vector<Node*> spec_values;
    i = fstring_body(t, i + 1, end, raw, level + 1, sub, spec_values);
    // CPython quirk: the spec and its trailing literal span just this token,
    // while literals flushed before a nested field span the whole concatenation.
    flush(sub, spec_values, t.begin, t.end);
    spec = node("JoinedStr", t.begin, 1);
    spec->end = t.end;
    add(spec, "values", std::move(spec_values));
  }
  if (i >= end || src_[i] != '}') fail_at(t.begin, "f-string: expecting '}'");
  ++i;
  if (!debug.empty()) {
    decode(st.buf, debug, true, false, t.begin);  // raw: only normalizes newlines
    if (conversion == -1 && !spec) conversion = 'r';
  }
  flush(st, values, st.begin, st.end);
  Node* fv = node("FormattedValue", st.begin, 3);
  fv->end = st.end;
  add(fv, "value", fstring_expression(t, lbrace, expr_begin, expr_end));
  add_int(fv, "conversion", conversion);
  add(fv, "format_spec", spec);
  values.push_back(fv);
  return i;
}

// Parses src[begin, end) — the expression of a replacement field — with real
// source positions. CPython parses it as "(expr)" with '(' at the '{' and ')' at
// the terminator, so an unparenthesized tuple spans those two characters.
Node* Parser::fstring_expression(const Token& t, size_t lbrace, size_t begin, size_t end) {
  const Loc at = loc_in(t, begin);
  std::vector<Token> frag;
  tokenize_fragment(src_, begin, end, at.line, at.offset - at.col, file_, frag);
  const Token* saved_toks = toks_;
  const size_t saved_n = n_, saved_pos = pos_;
  const Loc saved_end = last_end_;
  struct Restore {
    Parser& p;
    const Token* toks;
    size_t n, pos;
    Loc end;
    ~Restore() {
      p.toks_ = toks, p.n_ = n, p.pos_ = pos, p.last_end_ = end;
    }
  } restore{*this, saved_toks, saved_n, saved_pos, saved_end};
  toks_ = frag.data();
  n_ = frag.size();
  pos_ = 0;
  bool bare_tuple = false;
  Node* v = is_kw("yield") ? yield_expression() : star_expressions(&bare_tuple);
  if (cur().kind != Token::Kind::EndMarker) fail_expected("'}'");
  if (bare_tuple) {
    v->begin = loc_in(t, lbrace);
    v->end = loc_in(t, end);
    ++v->end.col, ++v->end.offset;
  }
  return v;
}

}  // namespace kopt::py
