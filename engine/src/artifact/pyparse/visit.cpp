#include "artifact/pyparse/visit.h"

namespace kopt::py {

void for_each_child(const Node* n, const std::function<void(const Node*)>& fn) {
  if (!n) return;
  for (const Field& f : n->fields) {
    if (f.kind == Field::Kind::Child && f.child) fn(f.child);
    else if (f.kind == Field::Kind::List)
      for (const Node* c : f.list)
        if (c) fn(c);  // a list may hold None (Dict.keys for `**d`)
  }
}

namespace {

void visit_below(const Node* n, const Node* parent, const std::function<Step(const Node*, const Node*)>& fn) {
  if (fn(n, parent) == Step::Prune) return;
  for_each_child(n, [&](const Node* c) { visit_below(c, n, fn); });
}

}  // namespace

void visit(const Node* root, const std::function<Step(const Node* n, const Node* parent)>& fn) {
  if (root) visit_below(root, nullptr, fn);
}

void walk(const Node* root, const std::function<void(const Node*)>& fn) {
  visit(root, [&](const Node* n, const Node*) {
    fn(n);
    return Step::Descend;
  });
}

bool any_node(const Node* root, const std::function<bool(const Node*)>& pred) {
  bool found = false;
  visit(root, [&](const Node* n, const Node*) {
    found = found || pred(n);
    return found ? Step::Prune : Step::Descend;
  });
  return found;
}

std::vector<const Node*> find_all(const Node* root, const std::function<bool(const Node*)>& pred) {
  std::vector<const Node*> out;
  walk(root, [&](const Node* n) {
    if (pred(n)) out.push_back(n);
  });
  return out;
}

}  // namespace kopt::py
