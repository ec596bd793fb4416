#!/usr/bin/env python3
"""CPython side of the parser differential test.

Prints the same normalized dump as the engine's `kopt::py::dump()` (format in
docs/parser.md) for `ast.parse()` of a file, using the running CPython (3.11).

usage: pyast_dump.py FILE
"""
import ast
import json
import sys
import warnings

# Integer literals may exceed the default int->str digit limit.
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)


def constant_value(v):
    if v is None or v is True or v is False or v is Ellipsis:
        return repr(v)
    if isinstance(v, int):
        return f"int {v}"
    if isinstance(v, float):
        return f"float {v!r}"
    if isinstance(v, complex):
        return f"complex {v.imag!r}j"
    if isinstance(v, str):
        return "str " + json.dumps(v, ensure_ascii=True)
    if isinstance(v, bytes):
        return "bytes " + v.hex()
    raise TypeError(f"unexpected constant {v!r}")


def dump_node(node, indent, prefix, out):
    header = "  " * indent + prefix + type(node).__name__
    if getattr(node, "lineno", None) is not None:
        header += f" {node.lineno}:{node.col_offset}-{node.end_lineno}:{node.end_col_offset}"
    out.append(header)
    if isinstance(node, ast.Constant):
        out.append("  " * (indent + 1) + "value: " + constant_value(node.value))
    for name in node._fields:
        if isinstance(node, ast.Constant) and name == "value":
            continue
        dump_value(getattr(node, name, None), indent + 1, name + ": ", out)


def dump_value(v, indent, prefix, out):
    pad = "  " * indent
    if v is None:
        out.append(pad + prefix + "None")
    elif isinstance(v, ast.AST):
        dump_node(v, indent, prefix, out)
    elif isinstance(v, list):
        if not v:
            out.append(pad + prefix + "[]")
            return
        out.append(pad + prefix + "[")
        for item in v:
            dump_value(item, indent + 1, "- ", out)
        out.append(pad + "]")
    else:  # identifiers and plain ints (level, simple, conversion, is_async)
        out.append(pad + prefix + str(v))


def dump_source(src: bytes) -> str:
    out = []
    with warnings.catch_warnings():  # invalid escapes etc. are accepted, just noisy
        warnings.simplefilter("ignore")
        tree = ast.parse(src)
    dump_node(tree, 0, "", out)
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 1
    with open(argv[1], "rb") as f:
        src = f.read()
    sys.stdout.write(dump_source(src))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
