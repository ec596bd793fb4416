// Tokenizer for the Python subset (see docs/parser.md).
//
// Produces CPython-style tokens (NAME, NUMBER, STRING, OP, NEWLINE, INDENT,
// DEDENT, ENDMARKER) where every token also owns the trivia in front of it, so
// concatenating trivia+text over the token list gives back the source exactly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/pyparse/ast.h"

namespace kopt::py {

// Rejects non-UTF-8 input and NUL bytes with a positioned ParseError.
void validate_utf8(std::string_view src, const std::string& file);

// Tokenizes a whole file (a leading UTF-8 BOM becomes trivia of the first token).
void tokenize(std::string_view src, const std::string& file, std::vector<Token>& out);

// Tokenizes the expression part of an f-string replacement field, src[begin, end),
// as if it were inside brackets (newlines are trivia, no NEWLINE/INDENT tokens).
// `line`/`line_start` give the real position of `begin` so nodes get CPython's
// (real-source) positions. Ends with an ENDMARKER at `end`.
void tokenize_fragment(std::string_view src, size_t begin, size_t end, uint32_t line, size_t line_start,
                       const std::string& file, std::vector<Token>& out);

}  // namespace kopt::py
