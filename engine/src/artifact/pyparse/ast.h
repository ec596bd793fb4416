// The Python-subset syntax tree.
//
// Nodes mirror CPython's `ast` classes (same type names, same field names, same
// field order) so the tree can be checked differentially against CPython: one
// generic node shape instead of ~60 structs keeps the parser, the dumper and the
// differential test in lock-step. Positions follow CPython: line is 1-based,
// col is the 0-based UTF-8 byte column; `offset` is the byte offset into the
// source, which is what the stitcher and the printer use.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::py {

struct Loc {
  uint32_t line = 0;    // 1-based; 0 means "this node has no position" (CPython's too)
  uint32_t col = 0;     // 0-based UTF-8 byte column
  uint32_t offset = 0;  // byte offset into Module::source
};

enum class ConstKind : uint8_t { None, True, False, Ellipsis, Int, Float, Complex, Str, Bytes };

struct Node;

// One field of a node, in CPython's `_fields` order. Exactly one of the
// payloads is meaningful, chosen by `kind`.
struct Field {
  enum class Kind : uint8_t {
    Null,    // a None-valued optional field (e.g. keyword.arg for **kw, Return.value)
    Child,   // one child node
    List,    // a list of children (may contain nullptr, e.g. Dict.keys for **d)
    Ident,   // identifier / operator / context name: "x", "Add", "Load"
    Int,     // plain integer field (ImportFrom.level, comprehension.is_async)
  };
  std::string_view name;
  Kind kind = Kind::Null;
  Node* child = nullptr;
  std::vector<Node*> list;
  std::string_view ident;  // into Module::source, a string literal, or Module::own()
  int64_t integer = 0;
};

struct Node {
  std::string_view type;  // CPython class name: "Call", "Name", "arguments", "keyword", ...
  Loc begin, end;         // [begin, end) — CPython lineno/col_offset .. end_lineno/end_col_offset
  std::vector<Field> fields;

  // Constant payload (type == "Constant").
  ConstKind const_kind = ConstKind::None;
  std::string value;  // decoded UTF-8 for Str, raw bytes for Bytes, source token text for numbers

  bool is(std::string_view t) const { return type == t; }
  const Field* field(std::string_view name) const {
    for (const auto& f : fields)
      if (f.name == name) return &f;
    return nullptr;
  }
  // Child node of a field, or nullptr when absent/None.
  const Node* child(std::string_view name) const {
    const Field* f = field(name);
    return f && f->kind == Field::Kind::Child ? f->child : nullptr;
  }
  // Children of a list field; empty when absent.
  const std::vector<Node*>& list(std::string_view name) const {
    static const std::vector<Node*> kEmpty;
    const Field* f = field(name);
    return f && f->kind == Field::Kind::List ? f->list : kEmpty;
  }
  // Identifier/operator/context field; empty when absent/None.
  std::string_view ident(std::string_view name) const {
    const Field* f = field(name);
    return f && f->kind == Field::Kind::Ident ? f->ident : std::string_view();
  }
};

// A lexical token with the trivia (spaces, comments, blank lines, backslash
// continuations) that precedes it. Concatenating `trivia + text` over all tokens
// reproduces the source byte for byte; NEWLINE/INDENT/DEDENT/ENDMARKER tokens
// carry their own bytes (possibly empty).
struct Token {
  enum class Kind : uint8_t { Name, Number, String, Op, Newline, Indent, Dedent, EndMarker };
  Kind kind;
  std::string_view trivia;
  std::string_view text;
  Loc begin, end;
};

// Thrown for malformed input; the CLI turns it into one `file:line:col: message` line, exit 2.
// `col` is 0-based like every Loc; the message shows it 1-based, as compilers do.
struct ParseError : std::runtime_error {
  std::string file;
  uint32_t line, col;
  std::string message;
  ParseError(std::string file_, uint32_t line_, uint32_t col_, std::string message_)
      : std::runtime_error(file_ + ":" + std::to_string(line_) + ":" + std::to_string(col_ + 1) + ": " + message_),
        file(std::move(file_)), line(line_), col(col_), message(std::move(message_)) {}
};

// A parsed file. Owns the source text, the tokens and every node (nodes and
// tokens point into `source`, so a Module is neither copyable nor movable).
class Module {
 public:
  Module(std::string source, std::string filename);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& source() const { return source_; }
  const std::string& filename() const { return filename_; }
  const Node* root() const { return root_; }
  const std::vector<Token>& tokens() const { return tokens_; }

  // Source text covered by a node (empty for nodes without positions).
  std::string_view text(const Node* n) const;
  // Reprints the file from its tokens; equals source() for an unmodified parse.
  std::string print() const;

  // Parser internals.
  Node* make(std::string_view type);
  // Keeps a string built during parsing (a dotted import name) alive as long as the module.
  std::string_view own(std::string s) { return owned_.emplace_back(std::move(s)); }
  std::vector<Token>& mutable_tokens() { return tokens_; }
  void set_root(Node* r) { root_ = r; }

 private:
  std::string source_;
  std::string filename_;
  std::vector<Token> tokens_;
  std::deque<Node> arena_;
  std::deque<std::string> owned_;
  Node* root_ = nullptr;
};

// Parses `source`; throws ParseError (with file:line:col) on invalid or non-UTF-8 input.
std::unique_ptr<Module> parse(std::string source, std::string filename);

// Normalized dump used by the differential test against CPython (tools/pyast_dump.py
// produces the identical format from CPython's `ast`). Format: docs/parser.md.
std::string dump(const Node* n);

}  // namespace kopt::py
