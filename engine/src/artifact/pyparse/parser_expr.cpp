// Expressions: CPython 3.11 python.gram `star_expressions` .. `atom`.
// Positions are token spans (CPython's EXTRA): a composite node starts at the
// first token of its rule (possibly a '(' of a parenthesized operand) and ends
// at the last consumed token; a parenthesized atom returns its inner node as is.
#include <utility>

#include "artifact/pyparse/parser.h"

namespace kopt::py {
namespace {

// Binary operator precedence for precedence climbing; 0 = not a binary operator.
int binop(const Token& t, std::string_view* name) {
  if (t.kind != Token::Kind::Op) return 0;
  struct Op {
    std::string_view tok, name;
    int prec;
  };
  static constexpr Op kOps[] = {{"|", "BitOr", 1}, {"^", "BitXor", 2}, {"&", "BitAnd", 3}, {"<<", "LShift", 4},
                                {">>", "RShift", 4}, {"+", "Add", 5},  {"-", "Sub", 5},    {"*", "Mult", 6},
                                {"/", "Div", 6},    {"//", "FloorDiv", 6}, {"%", "Mod", 6}, {"@", "MatMult", 6}};
  for (const Op& op : kOps)
    if (t.text == op.tok) {
      *name = op.name;
      return op.prec;
    }
  return 0;
}

}  // namespace

Node* Parser::star_expressions(bool* bare_tuple) {
  const Loc b = cur().begin;
  Node* first = star_expression();
  if (bare_tuple) *bare_tuple = false;
  if (!is_op(",")) return first;
  std::vector<Node*> elts{first};
  while (accept_op(",") && starts_expression()) elts.push_back(star_expression());
  if (bare_tuple) *bare_tuple = true;
  Node* t = node("Tuple", b, 2);
  add(t, "elts", std::move(elts));
  add_ident(t, "ctx", "Load");
  return done(t);
}

Node* Parser::star_expression() {
  if (!is_op("*")) return expression();
  Node* s = node("Starred", advance().begin, 2);
  add(s, "value", binary(1));
  add_ident(s, "ctx", "Load");
  return done(s);
}

Node* Parser::star_named_expression() { return is_op("*") ? star_expression() : named_expression(); }

Node* Parser::named_expression() {
  if (!is_name() || peek().kind != Token::Kind::Op || peek().text != ":=") return expression();
  const Loc b = cur().begin;
  Node* target = node("Name", b, 2);
  add_ident(target, "id", advance().text);
  add_ident(target, "ctx", "Store");
  done(target);
  advance();  // :=
  Node* n = node("NamedExpr", b, 2);
  add(n, "target", target);
  add(n, "value", expression());
  return done(n);
}

Node* Parser::expression() {
  const Loc b = cur().begin;
  DepthGuard guard(*this, b);
  if (is_kw("lambda")) return lambda();
  Node* body = disjunction();
  if (!accept_kw("if")) return body;
  Node* test = disjunction();
  expect_kw("else");
  Node* orelse = expression();
  Node* n = node("IfExp", b, 3);
  add(n, "test", test);
  add(n, "body", body);
  add(n, "orelse", orelse);
  return done(n);
}

Node* Parser::lambda() {
  const Loc b = advance().begin;
  Node* n = node("Lambda", b, 2);
  add(n, "args", parameters(false, ":"));
  expect_op(":");
  add(n, "body", expression());
  return done(n);
}

Node* Parser::disjunction() {
  const Loc b = cur().begin;
  Node* first = conjunction();
  if (!is_kw("or")) return first;
  std::vector<Node*> values{first};
  while (accept_kw("or")) values.push_back(conjunction());
  Node* n = node("BoolOp", b, 2);
  add_ident(n, "op", "Or");
  add(n, "values", std::move(values));
  return done(n);
}

Node* Parser::conjunction() {
  const Loc b = cur().begin;
  Node* first = inversion();
  if (!is_kw("and")) return first;
  std::vector<Node*> values{first};
  while (accept_kw("and")) values.push_back(inversion());
  Node* n = node("BoolOp", b, 2);
  add_ident(n, "op", "And");
  add(n, "values", std::move(values));
  return done(n);
}

Node* Parser::inversion() {
  if (!is_kw("not")) return comparison();
  const Loc b = advance().begin;
  DepthGuard guard(*this, b);
  Node* n = node("UnaryOp", b, 2);
  add_ident(n, "op", "Not");
  add(n, "operand", inversion());
  return done(n);
}

Node* Parser::comparison() {
  const Loc b = cur().begin;
  Node* left = binary(1);
  std::vector<Node*> ops, comparators;
  while (true) {
    std::string_view op;
    const Token& t = cur();
    if (t.kind == Token::Kind::Op) {
      if (t.text == "==") op = "Eq";
      else if (t.text == "!=") op = "NotEq";
      else if (t.text == "<") op = "Lt";
      else if (t.text == "<=") op = "LtE";
      else if (t.text == ">") op = "Gt";
      else if (t.text == ">=") op = "GtE";
      if (!op.empty()) advance();
    } else if (is_kw("in")) {
      advance();
      op = "In";
    } else if (is_kw("not") && peek().kind == Token::Kind::Name && peek().text == "in") {
      advance(), advance();
      op = "NotIn";
    } else if (is_kw("is")) {
      advance();
      op = accept_kw("not") ? "IsNot" : "Is";
    }
    if (op.empty()) break;
    ops.push_back(bare(op));
    comparators.push_back(binary(1));
  }
  if (ops.empty()) return left;
  Node* n = node("Compare", b, 3);
  add(n, "left", left);
  add(n, "ops", std::move(ops));
  add(n, "comparators", std::move(comparators));
  return done(n);
}

// Precedence climbing over | ^ & << >> + - * / // % @ (all left-associative).
Node* Parser::binary(int min_prec) {
  const Loc b = cur().begin;
  Node* left = factor();
  std::string_view name;
  for (int prec; (prec = binop(cur(), &name)) >= min_prec;) {
    advance();
    Node* right = binary(prec + 1);
    Node* n = node("BinOp", b, 3);
    add(n, "left", left);
    add_ident(n, "op", name);
    add(n, "right", right);
    left = done(n);
  }
  return left;
}

Node* Parser::factor() {
  std::string_view op;
  if (is_op("-")) op = "USub";
  else if (is_op("+")) op = "UAdd";
  else if (is_op("~")) op = "Invert";
  else return power();
  const Loc b = advance().begin;
  DepthGuard guard(*this, b);
  Node* n = node("UnaryOp", b, 2);
  add_ident(n, "op", op);
  add(n, "operand", factor());
  return done(n);
}

Node* Parser::power() {
  const Loc b = cur().begin;
  Node* base = primary();
  if (!is_op("**")) return base;
  DepthGuard guard(*this, cur().begin);
  advance();
  Node* n = node("BinOp", b, 3);
  add(n, "left", base);
  add_ident(n, "op", "Pow");
  add(n, "right", factor());
  return done(n);
}

Node* Parser::primary() {
  const Loc b = cur().begin;
  Node* e = atom();
  while (true) {
    if (accept_op(".")) {
      Node* n = node("Attribute", b, 3);
      add(n, "value", e);
      add_ident(n, "attr", expect_name());
      add_ident(n, "ctx", "Load");
      e = done(n);
    } else if (is_op("(")) {
      const Loc lp = advance().begin;
      Node* n = node("Call", b, 3);
      add(n, "func", e);
      call_arguments(n, lp);
      e = done(n);
    } else if (accept_op("[")) {
      Node* n = node("Subscript", b, 3);
      add(n, "value", e);
      add(n, "slice", subscript_slices());
      expect_op("]");
      add_ident(n, "ctx", "Load");
      e = done(n);
    } else {
      return e;
    }
  }
}

Node* Parser::constant(ConstKind k, Loc b) {
  Node* n = node("Constant", b, 1);
  n->const_kind = k;
  add_null(n, "kind");
  return done(n);
}

Node* Parser::atom() {
  const Token& t = cur();
  const Loc b = t.begin;
  switch (t.kind) {
    case Token::Kind::Name:
      if (t.text == "None" || t.text == "True" || t.text == "False") {
        advance();
        return constant(t.text == "None" ? ConstKind::None : t.text == "True" ? ConstKind::True : ConstKind::False, b);
      }
      if (is_name()) {
        Node* n = node("Name", b, 2);
        add_ident(n, "id", advance().text);
        add_ident(n, "ctx", "Load");
        return done(n);
      }
      break;
    case Token::Kind::Number: {
      advance();
      std::string_view s = t.text;
      ConstKind k = ConstKind::Int;
      if ((s.back() | 0x20) == 'j') {
        k = ConstKind::Complex;
      } else if (!(s.size() > 1 && s[0] == '0' && std::string_view("xXoObB").find(s[1]) != std::string_view::npos) &&
                 s.find_first_of(".eE") != std::string_view::npos) {
        k = ConstKind::Float;
      }
      Node* n = constant(k, b);
      n->value = s;
      return n;
    }
    case Token::Kind::String: return strings();
    case Token::Kind::Op:
      if (t.text == "(") return paren_atom();
      if (t.text == "[") return list_atom();
      if (t.text == "{") return brace_atom();
      if (t.text == "...") {
        advance();
        return constant(ConstKind::Ellipsis, b);
      }
      break;
    default: break;
  }
  fail_expected("expression");
}

Node* Parser::paren_atom() {
  const Loc b = advance().begin;
  if (accept_op(")")) {
    Node* t = node("Tuple", b, 2);
    add(t, "elts", std::vector<Node*>{});
    add_ident(t, "ctx", "Load");
    return done(t);
  }
  if (is_kw("yield")) {
    Node* y = yield_expression();
    expect_op(")");
    return y;
  }
  Node* first = star_named_expression();
  if (is_kw("for")) {
    if (first->is("Starred")) fail_at(first->begin, "iterable unpacking cannot be used in comprehension");
    Node* g = node("GeneratorExp", b, 2);
    add(g, "elt", first);
    add(g, "generators", comprehensions());
    expect_op(")");
    return done(g);
  }
  if (!is_op(",")) {
    if (first->is("Starred")) fail_at(first->begin, "cannot use starred expression here");
    expect_op(")");
    return first;
  }
  std::vector<Node*> elts{first};
  while (accept_op(",") && !is_op(")")) elts.push_back(star_named_expression());
  expect_op(")");
  Node* t = node("Tuple", b, 2);
  add(t, "elts", std::move(elts));
  add_ident(t, "ctx", "Load");
  return done(t);
}

Node* Parser::list_atom() {
  const Loc b = advance().begin;
  std::vector<Node*> elts;
  if (!is_op("]")) {
    Node* first = star_named_expression();
    if (is_kw("for")) {
      if (first->is("Starred")) fail_at(first->begin, "iterable unpacking cannot be used in comprehension");
      Node* c = node("ListComp", b, 2);
      add(c, "elt", first);
      add(c, "generators", comprehensions());
      expect_op("]");
      return done(c);
    }
    elts.push_back(first);
    while (accept_op(",") && !is_op("]")) elts.push_back(star_named_expression());
  }
  expect_op("]");
  Node* l = node("List", b, 2);
  add(l, "elts", std::move(elts));
  add_ident(l, "ctx", "Load");
  return done(l);
}

Node* Parser::brace_atom() {
  const Loc b = advance().begin;
  std::vector<Node*> keys, values;
  auto dict_item = [&] {
    if (accept_op("**")) {
      keys.push_back(nullptr);
      values.push_back(binary(1));
    } else {
      keys.push_back(expression());
      expect_op(":");
      values.push_back(expression());
    }
  };
  auto make_dict = [&] {
    expect_op("}");
    Node* d = node("Dict", b, 2);
    add(d, "keys", std::move(keys));
    add(d, "values", std::move(values));
    return done(d);
  };
  if (is_op("}")) return make_dict();
  if (is_op("**")) {
    dict_item();
    while (accept_op(",") && !is_op("}")) dict_item();
    return make_dict();
  }
  Node* first = star_named_expression();
  if (accept_op(":")) {
    Node* value = expression();
    if (is_kw("for")) {
      Node* c = node("DictComp", b, 3);
      add(c, "key", first);
      add(c, "value", value);
      add(c, "generators", comprehensions());
      expect_op("}");
      return done(c);
    }
    keys.push_back(first);
    values.push_back(value);
    while (accept_op(",") && !is_op("}")) dict_item();
    return make_dict();
  }
  if (is_kw("for")) {
    if (first->is("Starred")) fail_at(first->begin, "iterable unpacking cannot be used in comprehension");
    Node* c = node("SetComp", b, 2);
    add(c, "elt", first);
    add(c, "generators", comprehensions());
    expect_op("}");
    return done(c);
  }
  std::vector<Node*> elts{first};
  while (accept_op(",") && !is_op("}")) elts.push_back(star_named_expression());
  expect_op("}");
  Node* s = node("Set", b, 1);
  add(s, "elts", std::move(elts));
  return done(s);
}

Node* Parser::yield_expression() {
  const Loc b = advance().begin;
  if (accept_kw("from")) {
    Node* n = node("YieldFrom", b, 1);
    add(n, "value", expression());
    return done(n);
  }
  Node* n = node("Yield", b, 1);
  add(n, "value", starts_expression() ? star_expressions() : nullptr);
  return done(n);
}

Node* Parser::target_element() {
  if (!is_op("*")) return binary(1);
  Node* s = node("Starred", advance().begin, 2);
  add(s, "value", binary(1));
  add_ident(s, "ctx", "Load");
  return done(s);
}

Node* Parser::target_list() {
  const Loc b = cur().begin;
  Node* first = target_element();
  if (!is_op(",")) return first;
  std::vector<Node*> elts{first};
  while (accept_op(",") && starts_expression()) elts.push_back(target_element());
  Node* t = node("Tuple", b, 2);
  add(t, "elts", std::move(elts));
  add_ident(t, "ctx", "Load");
  return done(t);
}

std::vector<Node*> Parser::comprehensions() {
  std::vector<Node*> gens;
  while (accept_kw("for")) {
    Node* c = bare("comprehension");
    c->fields.reserve(4);
    Node* target = target_list();
    set_ctx(target, "Store");
    add(c, "target", target);
    expect_kw("in");
    add(c, "iter", disjunction());
    std::vector<Node*> ifs;
    while (accept_kw("if")) ifs.push_back(disjunction());
    add(c, "ifs", std::move(ifs));
    add_int(c, "is_async", 0);
    gens.push_back(c);
  }
  return gens;
}

// After '(' of a call: adds the `args` and `keywords` fields and consumes ')'.
void Parser::call_arguments(Node* call, Loc lparen) {
  std::vector<Node*> args, keywords;
  bool seen_kwargs = false;  // after **x, plain positionals and *x are errors
  while (!is_op(")")) {
    const Loc b = cur().begin;
    if (accept_op("*")) {
      if (seen_kwargs) fail_at(b, "iterable argument unpacking follows keyword argument unpacking");
      Node* s = node("Starred", b, 2);
      add(s, "value", expression());
      add_ident(s, "ctx", "Load");
      args.push_back(done(s));
    } else if (accept_op("**")) {
      Node* k = node("keyword", b, 2);
      add_null(k, "arg");
      add(k, "value", expression());
      keywords.push_back(done(k));
      seen_kwargs = true;
    } else if (is_name() && peek().kind == Token::Kind::Op && peek().text == "=") {
      Node* k = node("keyword", b, 2);
      add_ident(k, "arg", advance().text);
      advance();
      add(k, "value", expression());
      keywords.push_back(done(k));
    } else {
      Node* e = named_expression();
      if (is_kw("for")) {
        // A sole generator argument borrows the call's parentheses.
        Node* g = node("GeneratorExp", lparen, 2);
        add(g, "elt", e);
        add(g, "generators", comprehensions());
        if (!args.empty() || !keywords.empty() || !is_op(")"))
          fail_at(e->begin, "Generator expression must be parenthesized");
        expect_op(")");
        args.push_back(done(g));
        add(call, "args", std::move(args));
        add(call, "keywords", std::move(keywords));
        return;
      }
      if (!keywords.empty())
        fail_at(e->begin, seen_kwargs ? "positional argument follows keyword argument unpacking"
                                      : "positional argument follows keyword argument");
      args.push_back(e);
    }
    if (!accept_op(",")) break;
  }
  expect_op(")");
  add(call, "args", std::move(args));
  add(call, "keywords", std::move(keywords));
}

Node* Parser::subscript_slices() {
  const Loc b = cur().begin;
  Node* first = slice_element();
  if (!is_op(",") && !first->is("Starred")) return first;
  std::vector<Node*> elts{first};
  while (accept_op(",") && !is_op("]")) elts.push_back(slice_element());
  Node* t = node("Tuple", b, 2);
  add(t, "elts", std::move(elts));
  add_ident(t, "ctx", "Load");
  return done(t);
}

Node* Parser::slice_element() {
  const Loc b = cur().begin;
  if (is_op("*")) return star_expression();
  Node* lower = nullptr;
  if (!is_op(":")) {
    lower = named_expression();
    if (!is_op(":")) return lower;
  }
  advance();  // ':'
  auto bound = [&]() -> Node* { return is_op(":") || is_op(",") || is_op("]") ? nullptr : expression(); };
  Node* upper = bound();
  Node* step = accept_op(":") ? bound() : nullptr;
  Node* s = node("Slice", b, 3);
  add(s, "lower", lower);
  add(s, "upper", upper);
  add(s, "step", step);
  return done(s);
}

}  // namespace kopt::py
