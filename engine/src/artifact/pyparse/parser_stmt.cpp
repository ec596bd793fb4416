// Statements: CPython 3.11 python.gram `statements` .. `import_from`, minus async/match.
#include <utility>

#include "artifact/pyparse/parser.h"

namespace kopt::py {
namespace {

struct AugOp {
  std::string_view tok, name;
};
constexpr AugOp kAugOps[] = {{"+=", "Add"},     {"-=", "Sub"},     {"*=", "Mult"},   {"/=", "Div"},
                             {"//=", "FloorDiv"}, {"%=", "Mod"},   {"@=", "MatMult"}, {"&=", "BitAnd"},
                             {"|=", "BitOr"},   {"^=", "BitXor"},  {"<<=", "LShift"}, {">>=", "RShift"},
                             {"**=", "Pow"}};

}  // namespace

void Parser::statement(std::vector<Node*>& out) {
  if (cur().kind == Token::Kind::Indent) fail_at(cur().end, "unexpected indent");
  if (cur().kind == Token::Kind::Name) {
    std::string_view k = cur().text;
    if (k == "if") return out.push_back(if_statement());
    if (k == "while") return out.push_back(while_statement());
    if (k == "for") return out.push_back(for_statement());
    if (k == "try") return out.push_back(try_statement());
    if (k == "with") return out.push_back(with_statement());
    if (k == "def") return out.push_back(function_def({}));
    if (k == "class") return out.push_back(class_def({}));
  }
  if (is_op("@")) return out.push_back(decorated());
  simple_statements(out);
}

void Parser::simple_statements(std::vector<Node*>& out) {
  while (true) {
    out.push_back(small_statement());
    if (!accept_op(";") || cur().kind == Token::Kind::Newline) break;
  }
  expect_kind(Token::Kind::Newline, "newline");
}

// `:` followed by an indented suite or by simple statements on the same line.
std::vector<Node*> Parser::block() {
  expect_op(":");
  std::vector<Node*> body;
  if (cur().kind != Token::Kind::Newline) {
    simple_statements(body);
    return body;
  }
  advance();
  expect_kind(Token::Kind::Indent, "an indented block");
  DepthGuard guard(*this, cur().begin);
  while (cur().kind != Token::Kind::Dedent && cur().kind != Token::Kind::EndMarker) statement(body);
  expect_kind(Token::Kind::Dedent, "dedent");
  return body;
}

Node* Parser::small_statement() {
  const Loc b = cur().begin;
  if (cur().kind == Token::Kind::Name) {
    std::string_view k = cur().text;
    if (k == "pass" || k == "break" || k == "continue") {
      advance();
      return done(node(k == "pass" ? "Pass" : k == "break" ? "Break" : "Continue", b, 0));
    }
    if (k == "return") {
      advance();
      Node* n = node("Return", b, 1);
      add(n, "value", starts_expression() ? star_expressions() : nullptr);
      return done(n);
    }
    if (k == "del") {
      advance();
      std::vector<Node*> targets;
      do {
        if (!starts_expression()) break;
        Node* t = target_element();
        set_ctx(t, "Del");
        targets.push_back(t);
      } while (accept_op(","));
      if (targets.empty()) fail_expected("expression");
      Node* n = node("Delete", b, 1);
      add(n, "targets", std::move(targets));
      return done(n);
    }
    if (k == "global" || k == "nonlocal") {
      advance();
      std::vector<Node*> names;
      do names.push_back(bare(expect_name()));
      while (accept_op(","));
      Node* n = node(k == "global" ? "Global" : "Nonlocal", b, 1);
      add(n, "names", std::move(names));
      return done(n);
    }
    if (k == "assert") {
      advance();
      Node* n = node("Assert", b, 2);
      add(n, "test", expression());
      add(n, "msg", accept_op(",") ? expression() : nullptr);
      return done(n);
    }
    if (k == "raise") {
      advance();
      Node* n = node("Raise", b, 2);
      Node* exc = starts_expression() ? expression() : nullptr;
      add(n, "exc", exc);
      add(n, "cause", exc && accept_kw("from") ? expression() : nullptr);
      return done(n);
    }
    if (k == "import") return import_statement();
    if (k == "from") return from_statement();
  }
  return expression_statement();
}

// Expression statements and the three assignment forms, which share a prefix.
Node* Parser::expression_statement() {
  const Loc b = cur().begin;
  const bool parenthesized = is_op("(");
  Node* first = is_kw("yield") ? yield_expression() : star_expressions();
  if (is_op(":")) {
    advance();
    bool simple = first->is("Name") && !parenthesized;
    if (!first->is("Name") && !first->is("Attribute") && !first->is("Subscript"))
      fail_at(first->begin, "only single target (not tuple) can be annotated");
    set_ctx(first, "Store");
    Node* n = node("AnnAssign", b, 4);
    add(n, "target", first);
    add(n, "annotation", expression());
    Node* value = nullptr;
    if (accept_op("=")) value = is_kw("yield") ? yield_expression() : star_expressions();
    add(n, "value", value);
    add_int(n, "simple", simple ? 1 : 0);
    return done(n);
  }
  if (cur().kind == Token::Kind::Op) {
    for (const AugOp& op : kAugOps) {
      if (cur().text != op.tok) continue;
      if (!first->is("Name") && !first->is("Attribute") && !first->is("Subscript"))
        fail_at(first->begin, "illegal expression for augmented assignment");
      advance();
      set_ctx(first, "Store");
      Node* n = node("AugAssign", b, 3);
      add(n, "target", first);
      add_ident(n, "op", op.name);
      add(n, "value", is_kw("yield") ? yield_expression() : star_expressions());
      return done(n);
    }
  }
  if (is_op("=")) {
    std::vector<Node*> targets{first};
    Node* value = nullptr;
    while (accept_op("=")) {
      value = is_kw("yield") ? yield_expression() : star_expressions();
      if (is_op("=")) targets.push_back(value);
    }
    for (Node* t : targets) set_ctx(t, "Store");
    Node* n = node("Assign", b, 3);
    add(n, "targets", std::move(targets));
    add(n, "value", value);
    add_null(n, "type_comment");
    return done(n);
  }
  if (first->is("Starred")) fail_at(first->begin, "can't use starred expression here");
  Node* n = node("Expr", b, 1);
  add(n, "value", first);
  return done(n);
}

Node* Parser::if_statement() {
  const Loc b = advance().begin;  // `if` or `elif`
  Node* n = node("If", b, 3);
  add(n, "test", named_expression());
  add(n, "body", block());
  std::vector<Node*> orelse;
  if (is_kw("elif")) {
    orelse.push_back(if_statement());
  } else if (accept_kw("else")) {
    orelse = block();
  }
  add(n, "orelse", std::move(orelse));
  return done(n);
}

Node* Parser::while_statement() {
  const Loc b = advance().begin;
  Node* n = node("While", b, 3);
  add(n, "test", named_expression());
  add(n, "body", block());
  add(n, "orelse", accept_kw("else") ? block() : std::vector<Node*>{});
  return done(n);
}

Node* Parser::for_statement() {
  const Loc b = advance().begin;
  Node* n = node("For", b, 5);
  Node* target = target_list();
  set_ctx(target, "Store");
  add(n, "target", target);
  expect_kw("in");
  add(n, "iter", star_expressions());
  add(n, "body", block());
  add(n, "orelse", accept_kw("else") ? block() : std::vector<Node*>{});
  add_null(n, "type_comment");
  return done(n);
}

Node* Parser::try_statement() {
  const Loc b = advance().begin;
  Node* n = node("Try", b, 4);
  add(n, "body", block());
  std::vector<Node*> handlers;
  while (is_kw("except")) {
    Node* h = node("ExceptHandler", advance().begin, 3);
    Node* type = nullptr;
    std::string_view name;
    if (!is_op(":")) {
      type = expression();
      if (is_op(",")) fail_at(cur().begin, "multiple exception types must be parenthesized");
      if (accept_kw("as")) name = expect_name();
    }
    add(h, "type", type);
    if (name.empty()) {
      add_null(h, "name");
    } else {
      add_ident(h, "name", name);
    }
    add(h, "body", block());
    handlers.push_back(done(h));
  }
  std::vector<Node*> orelse, finalbody;
  if (!handlers.empty() && accept_kw("else")) orelse = block();
  if (accept_kw("finally")) {
    finalbody = block();
  } else if (handlers.empty()) {
    fail_expected("'except' or 'finally' block");
  }
  add(n, "handlers", std::move(handlers));
  add(n, "orelse", std::move(orelse));
  add(n, "finalbody", std::move(finalbody));
  return done(n);
}

Node* Parser::withitem() {
  Node* item = bare("withitem");
  item->fields.reserve(2);
  add(item, "context_expr", expression());
  Node* vars = nullptr;
  if (accept_kw("as")) {
    vars = target_element();
    set_ctx(vars, "Store");
  }
  add(item, "optional_vars", vars);
  return item;
}

Node* Parser::with_statement() {
  const Loc b = advance().begin;
  std::vector<Node*> items;
  // `with (a as b, c):` is a parenthesized item list, but `with (a, b) as c:` is
  // one item whose expression is a tuple; CPython tries the first reading first.
  if (is_op("(")) {
    const size_t save_pos = pos_;
    const Loc save_end = last_end_;
    const int save_depth = depth_;
    try {
      advance();
      do {
        if (is_op(")")) break;
        items.push_back(withitem());
      } while (accept_op(","));
      expect_op(")");
      if (!is_op(":")) fail_expected("':'");
    } catch (const ParseError&) {
      items.clear();
      pos_ = save_pos;
      last_end_ = save_end;
      depth_ = save_depth;
    }
  }
  if (items.empty()) {
    do items.push_back(withitem());
    while (accept_op(","));
  }
  Node* n = node("With", b, 3);
  add(n, "items", std::move(items));
  add(n, "body", block());
  add_null(n, "type_comment");
  return done(n);
}

Node* Parser::decorated() {
  std::vector<Node*> decorators;
  while (accept_op("@")) {
    decorators.push_back(named_expression());
    expect_kind(Token::Kind::Newline, "newline");
  }
  if (is_kw("def")) return function_def(std::move(decorators));
  if (is_kw("class")) return class_def(std::move(decorators));
  fail_expected("'def' or 'class' after decorator");
}

Node* Parser::function_def(std::vector<Node*> decorators) {
  const Loc b = advance().begin;
  Node* n = node("FunctionDef", b, 6);
  add_ident(n, "name", expect_name());
  expect_op("(");
  add(n, "args", parameters(true, ")"));
  expect_op(")");
  Node* returns = accept_op("->") ? expression() : nullptr;
  add(n, "body", block());
  add(n, "decorator_list", std::move(decorators));
  add(n, "returns", returns);
  add_null(n, "type_comment");
  return done(n);
}

Node* Parser::class_def(std::vector<Node*> decorators) {
  const Loc b = advance().begin;
  Node* n = node("ClassDef", b, 5);
  add_ident(n, "name", expect_name());
  // Reuse call-argument parsing for bases/keywords, then move them over.
  Node* call = bare("Call");
  call->fields.reserve(3);
  add(call, "func", nullptr);
  if (is_op("(")) {
    const Loc lp = advance().begin;
    call_arguments(call, lp);
  } else {
    add(call, "args", std::vector<Node*>{});
    add(call, "keywords", std::vector<Node*>{});
  }
  add(n, "bases", std::move(call->fields[1].list));
  add(n, "keywords", std::move(call->fields[2].list));
  add(n, "body", block());
  add(n, "decorator_list", std::move(decorators));
  return done(n);
}

// One parameter: NAME [':' annotation]; defaults are handled by parameters().
Node* Parser::parameter(bool annotations) {
  const Loc b = cur().begin;
  Node* a = node("arg", b, 3);
  add_ident(a, "arg", expect_name());
  add(a, "annotation", annotations && accept_op(":") ? expression() : nullptr);
  add_null(a, "type_comment");
  return done(a);
}

Node* Parser::parameters(bool annotations, std::string_view close) {
  std::vector<Node*> posonly, args, defaults, kwonly, kw_defaults;
  Node *vararg = nullptr, *kwarg = nullptr;
  bool star = false, slash = false;
  while (!is_op(close)) {
    if (kwarg) fail_expected("')' after **kwargs");
    const Loc at = cur().begin;
    if (accept_op("/")) {
      if (slash || star || args.empty()) fail_at(at, "'/' must follow at least one parameter, once, before '*'");
      slash = true;
      posonly = std::move(args);
      args.clear();
    } else if (accept_op("*")) {
      if (star) fail_at(at, "* argument may appear only once");
      star = true;
      if (!is_op(",") && !is_op(close)) vararg = parameter(annotations);
    } else if (accept_op("**")) {
      kwarg = parameter(annotations);
    } else {
      Node* p = parameter(annotations);
      Node* dflt = accept_op("=") ? expression() : nullptr;
      if (star) {
        kwonly.push_back(p);
        kw_defaults.push_back(dflt);
      } else {
        args.push_back(p);
        if (dflt) {
          defaults.push_back(dflt);
        } else if (!defaults.empty()) {
          fail_at(p->begin, "non-default argument follows default argument");
        }
      }
    }
    if (!accept_op(",")) break;
  }
  if (star && !vararg && kwonly.empty()) fail_at(cur().begin, "named arguments must follow bare *");
  Node* n = bare("arguments");
  n->fields.reserve(7);
  add(n, "posonlyargs", std::move(posonly));
  add(n, "args", std::move(args));
  add(n, "vararg", vararg);
  add(n, "kwonlyargs", std::move(kwonly));
  add(n, "kw_defaults", std::move(kw_defaults));
  add(n, "kwarg", kwarg);
  add(n, "defaults", std::move(defaults));
  return n;
}

// NAME ('.' NAME)* [as NAME] (dotted) or NAME [as NAME] / '*'.
Node* Parser::alias(bool dotted) {
  const Loc b = cur().begin;
  Node* a = node("alias", b, 2);
  std::string name(expect_name());
  while (dotted && accept_op(".")) {
    name += '.';
    name += expect_name();
  }
  add_ident(a, "name", m_.own(std::move(name)));
  if (accept_kw("as")) {
    add_ident(a, "asname", expect_name());
  } else {
    add_null(a, "asname");
  }
  return done(a);
}

Node* Parser::import_statement() {
  const Loc b = advance().begin;
  std::vector<Node*> names;
  do names.push_back(alias(true));
  while (accept_op(","));
  Node* n = node("Import", b, 1);
  add(n, "names", std::move(names));
  return done(n);
}

Node* Parser::from_statement() {
  const Loc b = advance().begin;
  int64_t level = 0;
  while (is_op(".") || is_op("...")) level += advance().text.size();
  std::string module;
  if (!is_kw("import")) {
    module = expect_name();
    while (accept_op(".")) {
      module += '.';
      module += expect_name();
    }
  }
  if (level == 0 && module.empty()) fail_expected("module name");
  expect_kw("import");
  std::vector<Node*> names;
  if (is_op("*")) {
    Node* a = node("alias", cur().begin, 2);
    advance();
    add_ident(a, "name", "*");
    add_null(a, "asname");
    names.push_back(done(a));
  } else if (accept_op("(")) {
    do {
      if (is_op(")")) break;
      names.push_back(alias(false));
    } while (accept_op(","));
    if (names.empty()) fail_expected("identifier");
    expect_op(")");
  } else {
    do names.push_back(alias(false));
    while (accept_op(","));
  }
  Node* n = node("ImportFrom", b, 3);
  if (module.empty()) {
    add_null(n, "module");
  } else {
    add_ident(n, "module", m_.own(module));
  }
  add(n, "names", std::move(names));
  add_int(n, "level", level);
  return done(n);
}

}  // namespace kopt::py
