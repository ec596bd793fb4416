#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "artifact/ir.h"

namespace kopt::agents::templates {

// The entry function's body as one-line statements (source text, no indentation), or
// nullopt when a statement is compound (if/for/while/with): templates that rewrite Inductor's
// straight-line persistent kernels only handle that form. A statement spanning lines (a call
// Inductor wraps) is refused, or with `join` written on one line ("f(a, b)").
std::optional<std::vector<std::string>> straight_line_body(const ir::Kernel& k, std::string* why_not,
                                                           bool join = false);

// One statement of a kernel body: its indentation and its text stripped, a statement Inductor wraps
// over lines joined into one ("f(\n    a,\n    b,\n)" -> "f(a, b)").
struct LogicalLine {
  int indent = 0;
  std::string text;
};

// The logical lines of a function body's text: physical lines joined while a bracket is open
// (brackets inside string literals and comments do not count); blank lines skipped.
std::vector<LogicalLine> logical_lines(const std::string& body);

// The pieces of `s` between top-level occurrences of `sep` (outside (), [] and {}), as written.
std::vector<std::string> split_top(const std::string& s, const std::string& sep);

// A call's arguments: `s` split at its top-level commas, each trimmed of spaces.
std::vector<std::string> split_args(const std::string& s);

// Names a statement assigns ("a, b = ..." -> {a, b}; "R0_BLOCK: tl.constexpr = 8" -> {R0_BLOCK}).
std::set<std::string> assigned_names(const std::string& stmt);

// `text` with every whole-word occurrence of a name in `names` suffixed with `suffix`.
std::string rename_words(const std::string& text, const std::set<std::string>& names, const std::string& suffix);

// The variable names a statement's text mentions, in order (its assigned names too; attributes such
// as tl.float32 and string literals are no names).
std::vector<std::string> words(const std::string& text);

// `text` with every whole word that is a key of `to` replaced by its value (attributes such as
// tl.float32 and string literals kept as written).
std::string substitute_words(const std::string& text, const std::map<std::string, std::string>& to);

}  // namespace kopt::agents::templates
