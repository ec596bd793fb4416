// Unit tests for the syntax-tree walker (artifact/pyparse/visit.h): pre-order in field order,
// parents, pruning, absent children, and the find helpers built on it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "artifact/pyparse/visit.h"

namespace kopt::py {
namespace {

// A node as the tests name it: its type, and a Name's id after a colon.
std::string label(const Node* n) {
  if (!n) return "-";
  return n->is("Name") ? "Name:" + std::string(n->ident("id")) : std::string(n->type);
}

std::vector<std::string> walked(const Node* root) {
  std::vector<std::string> out;
  walk(root, [&](const Node* n) { out.push_back(label(n)); });
  return out;
}

using Labels = std::vector<std::string>;

TEST(PyVisit, PreOrderInFieldOrder) {
  auto m = parse("x = f(a, b)\ny = c\n", "t.py");
  // Assign's fields are targets, value; Call's are func, args, keywords: a parent before its
  // children, children in CPython's field order, list items in order.
  EXPECT_EQ(walked(m->root()), (Labels{"Module", "Assign", "Name:x", "Call", "Name:f", "Name:a", "Name:b", "Assign",
                                       "Name:y", "Name:c"}));
  EXPECT_EQ(walked(m->root()->list("body")[1]), (Labels{"Assign", "Name:y", "Name:c"}));
  EXPECT_TRUE(walked(nullptr).empty());
}

TEST(PyVisit, SkipsAbsentChildren) {
  // `**d` leaves a None in Dict.keys; `return` has no value.
  auto m = parse("def g():\n    return\nz = {**d, 'k': v}\n", "t.py");
  EXPECT_EQ(walked(m->root()), (Labels{"Module", "FunctionDef", "arguments", "Return", "Assign", "Name:z", "Dict",
                                       "Constant", "Name:d", "Name:v"}));
}

TEST(PyVisit, SeesEachNodesParent) {
  auto m = parse("x = f(a)\n", "t.py");
  const Node* assign = m->root()->list("body")[0];
  std::vector<std::string> seen;
  visit(assign, [&](const Node* n, const Node* parent) {
    seen.push_back(label(n) + " in " + label(parent));
    return Step::Descend;
  });
  EXPECT_EQ(seen, (Labels{"Assign in -", "Name:x in Assign", "Call in Assign", "Name:f in Call", "Name:a in Call"}));
}

TEST(PyVisit, PruneLeavesOutTheSubtreeOnly) {
  auto m = parse("x = f(a, g(b))\ny = c\n", "t.py");
  std::vector<std::string> seen;
  visit(m->root(), [&](const Node* n, const Node*) {
    seen.push_back(label(n));
    return n->is("Call") ? Step::Prune : Step::Descend;
  });
  // The call is seen, nothing inside it; the statement after it still is.
  EXPECT_EQ(seen, (Labels{"Module", "Assign", "Name:x", "Call", "Assign", "Name:y", "Name:c"}));
}

TEST(PyVisit, ChildrenOnly) {
  auto m = parse("x = f(a, g(b))\n", "t.py");
  const Node* call = m->root()->list("body")[0]->child("value");
  std::vector<std::string> seen;
  for_each_child(call, [&](const Node* c) { seen.push_back(label(c)); });
  EXPECT_EQ(seen, (Labels{"Name:f", "Name:a", "Call"}));
}

TEST(PyVisit, FindAllAndAnyNode) {
  auto m = parse("x = f(a, g(b))\ny = h(c)\n", "t.py");
  std::vector<std::string> calls;
  for (const Node* n : find_all(m->root(), [](const Node* n) { return n->is("Call"); }))
    calls.push_back(label(n->child("func")));
  EXPECT_EQ(calls, (Labels{"Name:f", "Name:g", "Name:h"}));
  // any_node stops at the first match: `a` is the third node of the call (after the call and `f`).
  int asked = 0;
  EXPECT_TRUE(any_node(m->root()->list("body")[0]->child("value"), [&](const Node* n) {
    ++asked;
    return label(n) == "Name:a";
  }));
  EXPECT_EQ(asked, 3);
  EXPECT_FALSE(any_node(m->root(), [](const Node* n) { return n->is("While"); }));
  EXPECT_FALSE(any_node(nullptr, [](const Node*) { return true; }));
}

}  // namespace
}  // namespace kopt::py
