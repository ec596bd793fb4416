// Recursive-descent parser internals, split over parser.cpp (helpers, module),
// parser_stmt.cpp, parser_expr.cpp and parser_str.cpp (string literals, f-strings).
// The grammar follows CPython 3.11's python.gram for the subset in docs/parser.md;
// node positions are token spans exactly like CPython's EXTRA.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "artifact/pyparse/ast.h"

namespace kopt::py {

class Parser {
 public:
  explicit Parser(Module& m);
  Node* parse_module();

 private:
  friend struct DepthGuard;

  // --- tokens (parser.cpp)
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const { return toks_[pos_ + k < n_ ? pos_ + k : n_ - 1]; }
  bool is_op(std::string_view s) const { return cur().kind == Token::Kind::Op && cur().text == s; }
  bool is_kw(std::string_view s) const { return cur().kind == Token::Kind::Name && cur().text == s; }
  bool is_name() const;  // an identifier that is not a keyword
  const Token& advance();
  bool accept_op(std::string_view s);
  bool accept_kw(std::string_view s);
  void expect_op(std::string_view s);
  void expect_kw(std::string_view s);
  void expect_kind(Token::Kind k, std::string_view what);
  std::string_view expect_name();
  [[noreturn]] void fail_expected(std::string_view what) const;
  [[noreturn]] void fail_at(Loc at, std::string msg) const;
  bool starts_expression() const;

  // --- node construction (parser.cpp)
  Node* node(std::string_view type, Loc begin, size_t nfields);  // end is set by done()
  Node* done(Node* n) {
    n->end = last_end_;
    return n;
  }
  static void add(Node* n, std::string_view name, Node* child);  // Null field when child is nullptr
  static void add(Node* n, std::string_view name, std::vector<Node*> list);
  static void add_ident(Node* n, std::string_view name, std::string_view ident);
  static void add_int(Node* n, std::string_view name, int64_t v);
  static void add_null(Node* n, std::string_view name);
  Node* bare(std::string_view type);  // position-less node (operators in Compare.ops, names in Global)
  void set_ctx(Node* n, std::string_view ctx);  // validates an assignment / del target

  // --- statements (parser_stmt.cpp)
  void statement(std::vector<Node*>& out);
  void simple_statements(std::vector<Node*>& out);
  Node* small_statement();
  Node* expression_statement();
  std::vector<Node*> block();
  Node* if_statement();
  Node* while_statement();
  Node* for_statement();
  Node* try_statement();
  Node* with_statement();
  Node* withitem();
  Node* decorated();
  Node* function_def(std::vector<Node*> decorators);
  Node* class_def(std::vector<Node*> decorators);
  Node* import_statement();
  Node* from_statement();
  Node* alias(bool dotted);
  Node* parameters(bool annotations, std::string_view close);
  Node* parameter(bool annotations);

  // --- expressions (parser_expr.cpp)
  Node* star_expressions(bool* bare_tuple = nullptr);
  Node* star_expression();
  Node* star_named_expression();
  Node* named_expression();
  Node* expression();
  Node* lambda();
  Node* disjunction();
  Node* conjunction();
  Node* inversion();
  Node* comparison();
  Node* binary(int min_prec);
  Node* factor();
  Node* power();
  Node* primary();
  Node* atom();
  Node* paren_atom();
  Node* list_atom();
  Node* brace_atom();
  Node* yield_expression();
  Node* target_list();  // for-loop / comprehension targets (no comparisons)
  Node* target_element();
  std::vector<Node*> comprehensions();
  void call_arguments(Node* call, Loc lparen);
  Node* subscript_slices();
  Node* slice_element();
  Node* constant(ConstKind k, Loc b);

  // --- string literals (parser_str.cpp)
  Node* strings();
  struct FString;
  size_t fstring_body(const Token& t, size_t i, size_t end, bool raw, int level, FString& st,
                      std::vector<Node*>& values);
  size_t fstring_field(const Token& t, size_t i, size_t end, bool raw, int level, FString& st,
                       std::vector<Node*>& values);
  Node* fstring_expression(const Token& t, size_t lbrace, size_t begin, size_t end);
  void flush(FString& st, std::vector<Node*>& values, Loc begin, Loc end);
  void decode(std::string& out, std::string_view body, bool raw, bool bytes, Loc at) const;
  Loc loc_in(const Token& t, size_t off) const;

  Module& m_;
  std::string_view src_;
  const std::string& file_;
  const Token* toks_;  // the module's tokens, or an f-string fragment's while parsing one
  size_t n_;
  size_t pos_ = 0;
  Loc last_end_;  // end of the last consumed significant (non-layout) token
  int depth_ = 0;
};

// Bounds recursion so hostile input gets a ParseError instead of a stack overflow.
struct DepthGuard {
  static constexpr int kMaxDepth = 200;
  Parser& p;
  DepthGuard(Parser& parser, Loc at);
  ~DepthGuard() { --p.depth_; }
};

}  // namespace kopt::py
