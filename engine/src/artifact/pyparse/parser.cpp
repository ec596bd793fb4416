#include "artifact/pyparse/parser.h"

#include <algorithm>
#include <utility>

#include "artifact/pyparse/lexer.h"

namespace kopt::py {
namespace {

// The tree may be deeper than DepthGuard's recursion bound through left-leaning
// chains (a+b+c+..., a.b.c...); consumers walk it recursively, so cap it too.
constexpr size_t kMaxTreeDepth = 1000;

constexpr std::string_view kKeywords[] = {
    "False", "None",   "True",  "and",    "as",       "assert", "async",  "await", "break",
    "class", "continue", "def", "del",    "elif",     "else",   "except", "finally", "for",
    "from",  "global", "if",    "import", "in",       "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise", "return", "try",      "while",  "with",   "yield"};

bool is_keyword(std::string_view s) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), s) != std::end(kKeywords);
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::Newline: return "newline";
    case Token::Kind::Indent: return "indent";
    case Token::Kind::Dedent: return "dedent";
    case Token::Kind::EndMarker: return "end of file";
    default: {
      std::string s(t.text.substr(0, 40));
      if (auto nl = s.find_first_of("\r\n"); nl != std::string::npos) s = s.substr(0, nl) + "...";
      return "'" + s + "'";
    }
  }
}

void check_tree_depth(const Node* root, const std::string& file) {
  std::vector<std::pair<const Node*, size_t>> stack{{root, 1}};
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    if (d > kMaxTreeDepth) throw ParseError(file, n->begin.line, n->begin.col, "nesting too deep");
    for (const Field& f : n->fields) {
      if (f.kind == Field::Kind::Child) stack.push_back({f.child, d + 1});
      if (f.kind == Field::Kind::List)
        for (const Node* c : f.list)
          if (c) stack.push_back({c, d + 1});
    }
  }
}

}  // namespace

DepthGuard::DepthGuard(Parser& parser, Loc at) : p(parser) {
  if (++p.depth_ > kMaxDepth) {
    --p.depth_;
    p.fail_at(at, "nesting too deep");
  }
}

Parser::Parser(Module& m)
    : m_(m), src_(m.source()), file_(m.filename()), toks_(m.tokens().data()), n_(m.tokens().size()) {}

bool Parser::is_name() const { return cur().kind == Token::Kind::Name && !is_keyword(cur().text); }

const Token& Parser::advance() {
  const Token& t = toks_[pos_];
  if (t.kind <= Token::Kind::Op) last_end_ = t.end;  // layout tokens don't end nodes
  if (pos_ + 1 < n_) ++pos_;
  return t;
}

bool Parser::accept_op(std::string_view s) {
  if (!is_op(s)) return false;
  advance();
  return true;
}

bool Parser::accept_kw(std::string_view s) {
  if (!is_kw(s)) return false;
  advance();
  return true;
}

void Parser::expect_op(std::string_view s) {
  if (!accept_op(s)) fail_expected("'" + std::string(s) + "'");
}

void Parser::expect_kw(std::string_view s) {
  if (!accept_kw(s)) fail_expected("'" + std::string(s) + "'");
}

void Parser::expect_kind(Token::Kind k, std::string_view what) {
  if (cur().kind != k) fail_expected(what);
  advance();
}

std::string_view Parser::expect_name() {
  if (!is_name()) fail_expected("identifier");
  return advance().text;
}

void Parser::fail_expected(std::string_view what) const {
  fail_at(cur().begin, "expected " + std::string(what) + ", found " + describe(cur()));
}

void Parser::fail_at(Loc at, std::string msg) const { throw ParseError(file_, at.line, at.col, std::move(msg)); }

bool Parser::starts_expression() const {
  const Token& t = cur();
  switch (t.kind) {
    case Token::Kind::Number:
    case Token::Kind::String: return true;
    case Token::Kind::Name:
      return !is_keyword(t.text) || t.text == "not" || t.text == "lambda" || t.text == "None" ||
             t.text == "True" || t.text == "False";
    case Token::Kind::Op:
      return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" || t.text == "+" || t.text == "~" ||
             t.text == "..." || t.text == "*";
    default: return false;
  }
}

Node* Parser::node(std::string_view type, Loc begin, size_t nfields) {
  Node* n = m_.make(type);
  n->begin = begin;
  n->fields.reserve(nfields);
  return n;
}

Node* Parser::bare(std::string_view type) { return m_.make(type); }

void Parser::add(Node* n, std::string_view name, Node* child) {
  Field& f = n->fields.emplace_back();
  f.name = name;
  if (child) {
    f.kind = Field::Kind::Child;
    f.child = child;
  }
}

void Parser::add(Node* n, std::string_view name, std::vector<Node*> list) {
  Field& f = n->fields.emplace_back();
  f.name = name;
  f.kind = Field::Kind::List;
  f.list = std::move(list);
}

void Parser::add_ident(Node* n, std::string_view name, std::string_view ident) {
  Field& f = n->fields.emplace_back();
  f.name = name;
  f.kind = Field::Kind::Ident;
  f.ident = ident;
}

void Parser::add_int(Node* n, std::string_view name, int64_t v) {
  Field& f = n->fields.emplace_back();
  f.name = name;
  f.kind = Field::Kind::Int;
  f.integer = v;
}

void Parser::add_null(Node* n, std::string_view name) { n->fields.emplace_back().name = name; }

void Parser::set_ctx(Node* n, std::string_view ctx) {
  auto set = [&](Node* x) {
    for (Field& f : x->fields)
      if (f.name == "ctx") f.ident = ctx;
  };
  if (n->is("Name") || n->is("Attribute") || n->is("Subscript")) {
    set(n);
  } else if ((n->is("Tuple") || n->is("List"))) {
    set(n);
    for (Node* e : n->fields[0].list) set_ctx(e, ctx);
  } else if (n->is("Starred") && ctx == "Store") {
    set(n);
    set_ctx(n->fields[0].child, ctx);
  } else {
    fail_at(n->begin, std::string(ctx == "Del" ? "cannot delete " : "cannot assign to ") + std::string(n->type));
  }
}

Node* Parser::parse_module() {
  Node* mod = m_.make("Module");
  std::vector<Node*> body;
  while (cur().kind != Token::Kind::EndMarker) statement(body);
  add(mod, "body", std::move(body));
  add(mod, "type_ignores", std::vector<Node*>{});
  return mod;
}

std::unique_ptr<Module> parse(std::string source, std::string filename) {
  auto m = std::make_unique<Module>(std::move(source), std::move(filename));
  validate_utf8(m->source(), m->filename());
  tokenize(m->source(), m->filename(), m->mutable_tokens());
  Parser p(*m);
  Node* root = p.parse_module();
  check_tree_depth(root, m->filename());
  m->set_root(root);
  return m;
}

}  // namespace kopt::py
