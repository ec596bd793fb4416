// Walking the syntax tree: the one recursion over `Node` children that every analysis shares.
//
// The coder's rewrites, the G1 static checks, the output and access analyses all look for patterns
// anywhere in a kernel's tree. One walker gives them all the same order (pre-order; fields in
// CPython's `_fields` order, list items in order, absent children skipped) and lets a caller see a
// node's parent or leave a subtree out without writing its own recursion.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "artifact/pyparse/ast.h"

namespace kopt::py {

// What a `visit` callback says after seeing a node.
enum class Step : uint8_t {
  Descend,  // go on into the node's children
  Prune,    // leave the node's subtree out (its siblings are still visited)
};

// Calls `fn(node, parent)` on `root` and every node below it, pre-order; `parent` is nullptr for
// `root`. A subtree is left out when `fn` returns Step::Prune for its top node.
void visit(const Node* root, const std::function<Step(const Node* n, const Node* parent)>& fn);

// Calls `fn` on `root` and every node below it, pre-order (visit without parents or pruning).
void walk(const Node* root, const std::function<void(const Node*)>& fn);

// Calls `fn` on each child node of `n` (not deeper), in walk order: for a recursion that computes a
// value from its children's values, which a visitor cannot return.
void for_each_child(const Node* n, const std::function<void(const Node*)>& fn);

// Whether `pred` holds for `root` or any node below it; stops at the first such node.
bool any_node(const Node* root, const std::function<bool(const Node*)>& pred);

// The nodes at or below `root` for which `pred` holds, in walk order.
std::vector<const Node*> find_all(const Node* root, const std::function<bool(const Node*)>& pred);

}  // namespace kopt::py
