// Evaluates literal Python expressions (the metadata dicts Inductor writes into
// decorators) to JSON. Tuples and sets become arrays; dict keys that are not
// strings become their source text; calls become {"__call__": name, kwargs...};
// anything else (names, attributes) becomes its source text as a string.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "artifact/pyparse/ast.h"

namespace kopt::ir {

nlohmann::json literal_to_json(const py::Module& m, const py::Node* n);

// Integer value of a constant or negated constant; nullopt for anything else.
std::optional<int64_t> int_literal(const py::Node* n);

// The dotted name of a Name/Attribute chain ("torch.ops.aten.mm.default"), or "".
std::string dotted_name(const py::Node* n);

// Whether `n` is a call of `tl.<fn>` (`tl.load(...)`, `tl.store(...)`).
bool is_tl_call(const py::Node* n, std::string_view fn);

// For a conversion `value.to(dtype)` (one argument, no keywords): `value`, with `dtype` set to the
// argument when given; nullptr for anything else.
const py::Node* converted(const py::Node* n, const py::Node** dtype = nullptr);

}  // namespace kopt::ir
