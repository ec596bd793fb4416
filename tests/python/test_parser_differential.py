"""Differential test of the engine's Python parser against CPython's `ast`.

For every .py file under corpus/, examples/, tools/ and python/, every Triton
kernel source embedded in corpus modules (`async_compile.triton(name, '''src''')`),
and the hand-written SNIPPETS below, the engine's dump (`kernelopt parse F --dump`)
must equal tools/pyast_dump.py's, and `--print` must reproduce the file byte for
byte. A file outside the supported subset fails the test; nothing is skipped.

The engine binary: $KERNELOPT_BIN, else `kernelopt` on PATH, else build/engine/kernelopt.
"""
import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import engine_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import pyast_dump  # noqa: E402

SOURCE_DIRS = ("corpus", "examples", "tools", "python")


def source_files():
    files = []
    for d in SOURCE_DIRS:
        files += sorted((ROOT / d).rglob("*.py"))
    return files


def triton_kernels():
    """(id, source) of each kernel string passed to async_compile.triton in corpus modules."""
    out = []
    for path in sorted((ROOT / "corpus").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "triton"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "async_compile"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)):
                name = node.args[0].value if isinstance(node.args[0], ast.Constant) else node.lineno
                out.append((f"{path.relative_to(ROOT)}::{name}", node.args[1].value.encode()))
    return out


# Tricky inputs, as bytes so CRLF / BOM / missing final newline stay exact.
SNIPPETS = {
    "fstring_spec": b'x = f"{a!r:>{width}.{prec}f} {b=} {c:}" f\'{d["k"]}\' "tail"\n',
    "fstring_nested": b'x = f"{f\'{y}\'}" + f"{{literal}} {z!s}"\nw = f"{a, b}"\n',
    "fstring_triple": b'x = f"""\nline {a}\n  {b + 1:{w}}\n"""\n',
    "fstring_debug_spaces": b"x = f'{ a = }' f'{b=:>3}' F'{c!a}' rf'\\d{e}'\n",
    "comprehensions": b"x = [i * j for i in range(3) if i for j in range(i) if j if not j]\n"
                      b"y = {k: v for k, v in d.items()}\nz = {s for s in t}\nw = list(g for g in h)\n",
    "slices": b"a[1:2, ::3]\nb[:, None]\nc[None, :]\nd[::]\ne[x:=1]\nf[1:2:3, ...]\ng[()]\nh[1,]\n",
    "decorators": b"@a.b(c)\n@d\n@(lambda f: f)\ndef f(): pass\n\n@e[0]\nclass C: pass\n",
    "lambdas": b"f = lambda: 0\ng = lambda a, b=1, *c, d, e=2, **f: (a, b)\nh = lambda *, k: k\n",
    "walrus": b"if (n := len(a)) > 10:\n    pass\nwhile chunk := f.read(10):\n    print(chunk)\n",
    "star_args": b"f(*a, *b, c, d=1, **e, **g)\na, *b, c = x\n[*a, *b]\n{*a, 1}\nprint(*args, sep='')\n",
    "chained_compare": b"a < b <= c == d != e > f >= g is h is not i in j not in k\n",
    "boolops": b"x = a or b or c and d and not e\ny = (a or b) and (c or d)\n",
    "precedence": b"x = -a ** -b * c // d % e @ f + g - h << i >> j & k ^ l | m\ny = ~a + +b\nz = a ** b ** c\n",
    "ternary": b"x = a if b else c if d else e\ny = lambda: a if b else c\n",
    "crlf": b"def f(a,\r\n      b):\r\n    return a + \\\r\n        b\r\n\r\ns = '''x\r\ny'''\r\n",
    "bom": b"\xef\xbb\xbfimport os\nx = '\xc3\xa9'\n",
    "no_final_newline": b"if x:\n    y = 1  # trailing comment",
    "trailing_trivia": b"x = 1\n\n# comment at end\n   \n\t\n",
    "tabs": b"if x:\n\ty = 1\n\tif y:\n\t\tz = 2\n",
    "strings": b"a = 'a' \"b\" '''c''' \"\"\"d\"\"\"\nb = b'\\x00\\xff' rb'\\n' Br'x' bR'y'\n"
               b"c = u'\\u00e9\\U0001F600\\x41\\101\\n\\t\\\\\\'\\\"\\a\\b\\f\\v\\r' U'up'\nd = 'line\\\ncont'\ne = '\\q'\n",
    "numbers": b"x = (0, 00, 1_000_000, 0x_FF, 0o17, 0b1010, 1.5, 1e-7, 1E16, 1e15, .5, 5., 1_0.0_1, 3j, 1.5J,"
               b" 1e999, 123456789012345678901234567890, 0xFFFFFFFFFFFFFFFFFFFFFFFF, 1e-5, 0.0001, 2.5e-320)\n",
    "annotations": b"X: int\nY: tl.constexpr = 8\n(Z): int = 1\na.b: int = 2\nc[0]: str\n"
                   b"def f(x: int, *a: str, y: 'T' = 1, **k: dict) -> List[int]:\n    GROUP_M : tl.constexpr = 8\n",
    "with_forms": b"with a:\n    pass\nwith a as b, c as (d, e):\n    pass\nwith (a as b, c):\n    pass\n"
                  b"with (a, b) as c:\n    pass\nwith (a, b):\n    pass\nwith (yield_ := a):\n    pass\n",
    "try_forms": b"try:\n    pass\nexcept ValueError as e:\n    raise RuntimeError('x') from e\n"
                 b"except (A, B):\n    raise\nexcept:\n    pass\nelse:\n    pass\nfinally:\n    pass\n",
    "loops": b"for i in range(3):\n    continue\nelse:\n    pass\nfor a, (b, *c) in x:\n    break\n"
             b"while True:\n    break\nelse:\n    pass\nfor x in *a, *b:\n    pass\n",
    "imports": b"import a\nimport a.b.c as d, e\nfrom . import x\nfrom .. import (y, z as w,)\n"
               b"from ...pkg.mod import *\nfrom a.b import c as d\n",
    "generators": b"def g():\n    yield\n    yield 1\n    yield 1, 2\n    x = yield from h()\n    y = yield\n    f((yield))\n",
    "scopes": b"def f():\n    global a, b\n    def g():\n        nonlocal c\n    del a, b[0], c.d, (e, f), [g]\n    assert x\n    assert x, 'msg'\n",
    "dicts_sets": b"d = {}\ne = {**a, 'b': 1, **c}\nf = {1, 2,}\ng = {'a': [1, 2], (1,): {3}}\nh = ()\n",
    "class_def": b"class A(B, C, metaclass=M, **kw):\n    '''doc'''\n    x = 1\n    def m(self, /, a, *, b): ...\n",
    "calls": b"f()\nf(a)(b)(c)\nf(a,)\nf(a, b=1,)\nobj.method(x)[0].attr\nsum(x for x in y)\nf(*a)\n",
    "semicolons": b"a = 1; b = 2;\nif x: a = 1; b = 2\n",
    "chained_assign": b"a = b = c = 1\na, b = b, a\n[a, b] = c\na.b = c[d] = e\nx += 1\ny **= 2\nz //= 3\nw >>= 1\n",
    "continuations": b"x = 1 + \\\n    2\nif a and \\\n   b:\n    pass\ny = (1 +\n     2)  # c\n",
    "unicode": b"s = '\xe6\x97\xa5\xe6\x9c\xac' + f'{\xc3\xa9t\xc3\xa9}\xe2\x82\xac'\n\xc3\xa9t\xc3\xa9 = 1\n",
    "implicit_concat": b"x = ('a'\n     'b'\n     f'{c}'\n     'd')\ny = u'a' 'b'\n",
    "inductor_kernel": b"@triton.jit\ndef k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
                       b"    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]\n"
                       b"    tmp0 = tl.load(in_ptr0 + (xindex), xmask, eviction_policy='evict_last').to(tl.float32)\n"
                       b"    tl.store(out_ptr0 + (x0), tmp0, None)\n",
}


def run_engine(path, flag):
    return subprocess.run([engine_binary(), "parse", str(path), flag], capture_output=True)


def check(path: pathlib.Path, src: bytes):
    expected = pyast_dump.dump_source(src)  # CPython must accept every input we check
    got = run_engine(path, "--dump")
    assert got.returncode == 0, f"engine rejected {path}: {got.stderr.decode(errors='replace')}"
    assert got.stdout.decode() == expected
    printed = run_engine(path, "--print")
    assert printed.returncode == 0
    assert printed.stdout == src, "print() is not byte-identical to the source"


@pytest.mark.parametrize("path", source_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_repo_file(path):
    check(path, path.read_bytes())


@pytest.mark.parametrize("kid,src", triton_kernels() or [pytest.param(None, None, marks=pytest.mark.skip(
    reason="no corpus modules yet"))])
def test_triton_kernel(kid, src, tmp_path):
    f = tmp_path / "kernel.py"
    f.write_bytes(src)
    check(f, src)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet(name, tmp_path):
    f = tmp_path / f"{name}.py"
    f.write_bytes(SNIPPETS[name])
    check(f, SNIPPETS[name])


def test_found_repo_files():
    # The tools/ directory always holds at least pyast_dump.py and the fuzz seeds.
    assert any(p.name == "pyast_dump.py" for p in source_files())


def test_parse_error_exit_code(tmp_path):
    f = tmp_path / "bad.py"
    f.write_bytes(b"x = = 1\n")
    r = run_engine(f, "--dump")
    assert r.returncode == 2
    line = r.stderr.decode().strip()
    # One line, 1-based column like compilers: the second `=` is column 5.
    assert line.startswith(f"kernelopt: error: {f}:1:5: expected expression"), line
