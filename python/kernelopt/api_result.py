"""Reading a result directory and comparing generated modules (the Python API's ground floor).

open_result() reads and checks a result (the --out directory of `kernelopt optimize`) or a plain
bundle into a Result; normalize_module()/match_module() decide whether two generated modules are
the same program. Both load() (api.py) and the torch.compile backend (api_backend.py) start from
here; kept apart from them because neither reading nor matching needs a model or a compiler.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from .worker.capture.capture_common import FORMAT, FORMAT_VERSION

__all__ = ["ResultError", "Result", "open_result", "normalize_module", "match_module"]


class ResultError(ValueError):
    """A result that cannot be used as asked; the message says what went wrong and what to do."""


# ---------------------------------------------------------------- reading a result


@dataclass
class Result:
    """A result (or bundle) directory, read and checked."""

    path: Path
    meta: dict
    sources: list[str]  # module_<i>.py: the optimized modules (a bundle's captured ones)
    baselines: list[str]  # baseline/module_<i>.py (a plain bundle: the same as sources)
    optimized: bool  # baseline/ is present

    def module_path(self, i: int) -> Path:
        return self.path / self.meta["graphs"][i]["module"]


def open_result(path: str | Path) -> Result:
    """Read a result directory; raises FileNotFoundError or ResultError naming the fix."""
    path = Path(path)
    what = "pass the --out directory of `kernelopt optimize` (or a bundle of `kernelopt capture`)"
    if not path.exists():
        raise FileNotFoundError(f"kernelopt result {path} does not exist; {what}")
    if not path.is_dir():
        raise ResultError(f"kernelopt result {path} is not a directory; {what}")
    meta_path = path / "meta.json"
    if not meta_path.is_file():
        raise ResultError(f"{path} is not a kernelopt result: it has no meta.json; {what}")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResultError(f"{meta_path} cannot be read ({e}); re-run `kernelopt optimize`") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ResultError(f"{meta_path} is not a kernelopt bundle's meta.json (format is not {FORMAT!r}); {what}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ResultError(f"{meta_path} has format_version {meta.get('format_version')!r}, this kernelopt reads "
                          f"{FORMAT_VERSION}; re-run `kernelopt capture` and `kernelopt optimize` with this kernelopt")
    graphs = meta.get("graphs") or []
    if not graphs:
        raise ResultError(f"{meta_path} lists no graphs; re-run `kernelopt capture` and `kernelopt optimize`")
    baseline_dir = path / "baseline"
    optimized = baseline_dir.is_dir()
    sources, baselines = [], []
    for i, graph in enumerate(graphs):
        module = path / graph["module"]
        if not module.is_file():
            raise FileNotFoundError(f"{module} is missing: the result is incomplete; re-run `kernelopt optimize`")
        sources.append(module.read_text(encoding="utf-8"))
        if optimized:
            base = baseline_dir / graph["module"]
            if not base.is_file():
                raise FileNotFoundError(f"{base} is missing: the result is incomplete; re-run `kernelopt optimize`")
            baselines.append(base.read_text(encoding="utf-8"))
            problem = _differs_outside_kernels(sources[-1], baselines[-1])
            if problem:
                raise ResultError(f"{module} differs from {base} outside its Triton kernels ({problem}): the result "
                                  "is damaged or mixed up; re-run `kernelopt optimize`")
        else:
            baselines.append(sources[-1])
    return Result(path, meta, sources, baselines, optimized)


def _kernel_blanked_dump(source: str) -> str:
    """The module's AST with the source of every `async_compile.triton(name, src, ...)` blanked."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and ast.unparse(node.func) == "async_compile.triton"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
            node.args[1] = ast.Constant("<kernel>")
    return ast.dump(tree)


def _differs_outside_kernels(optimized: str, baseline: str) -> str | None:
    """None when the two modules differ at most in their kernel sources (comments aside)."""
    try:
        same = _kernel_blanked_dump(optimized) == _kernel_blanked_dump(baseline)
    except SyntaxError as e:
        return f"does not parse: {e.msg} at line {e.lineno}"
    if same:
        return None
    a, b = normalize_module(optimized), normalize_module(baseline)
    return _first_difference(a, b)


# ---------------------------------------------------------------- matching generated modules


@dataclass(frozen=True)
class _Token:
    kind: int
    text: str
    line: int


def normalize_module(source: str) -> list[_Token]:
    """A module's program as a token stream, without what varies between two compiles of the same graph.

    Dropped: comments (Inductor's `# AOT ID: ['3_inference']` counts graphs compiled earlier in the
    process; `# kernel path: /tmp/torchinductor_<user>/...` names the cache directory; the rest describe
    the graph in words), layout (blank lines, line continuations, indentation width) and the value of
    inductor_meta's `'backend_hash'` inside kernel sources (a cache key of the Triton installation).
    Everything else that executes stays, kernel sources included, character for character: two
    modules with equal streams are the same program.
    """
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        text = "" if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE) else tok.string
        if tok.type == tokenize.STRING:
            text = _BACKEND_HASH.sub(r"\1'*'", text)
        out.append(_Token(tok.type, text, tok.start[0]))
    return out


# inductor_meta's backend_hash is a cache key of the Triton installation (a hash of triton's own
# files and ptxas's version), not part of the program: seen to differ between two processes on the
# same H200 with the same torch/triton. Inductor uses it only to key its autotuning cache.
_BACKEND_HASH = re.compile(r"('backend_hash': )'[0-9A-Fa-f]*'")


def _first_difference(got: list[_Token], want: list[_Token]) -> str:
    n = min(len(got), len(want))
    i = next((k for k in range(n) if (got[k].kind, got[k].text) != (want[k].kind, want[k].text)), n)
    if i == n and len(got) == len(want):
        return "same program"
    if i < n and got[i].kind == want[i].kind == tokenize.STRING:
        # a kernel source is one token: say where inside it the two differ
        a, b = got[i].text, want[i].text
        c = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        line_a, line_b = got[i].line + a.count("\n", 0, c), want[i].line + b.count("\n", 0, c)
        return f"first difference at line {line_a} {a[max(0, c - 30):c + 30]!r} vs line {line_b} " \
               f"{b[max(0, c - 30):c + 30]!r}"
    where = lambda toks: f"line {toks[i].line} {toks[i].text[:60]!r}" if i < len(toks) else "its end"  # noqa: E731
    return f"first difference at {where(got)} vs {where(want)}"


def match_module(generated: str, baselines: list[str] | list[list[_Token]]) -> tuple[int | None, str]:
    """(index of the baseline that is the same program as `generated`, or None; why).

    `baselines` are module texts or normalize_module() streams. The match is exact on everything
    that executes (normalize_module), so a match is the same program and the optimized module of that
    graph computes what Inductor's module would have.
    """
    try:
        got = normalize_module(generated)
    except (tokenize.TokenError, SyntaxError) as e:
        return None, f"the generated module does not tokenize ({e})"
    key = [(t.kind, t.text) for t in got]
    best, best_len = "", -1
    for i, base in enumerate(baselines):
        want = normalize_module(base) if isinstance(base, str) else base
        if [(t.kind, t.text) for t in want] == key:
            return i, f"same program as graph {i}"
        common = next((k for k, (a, b) in enumerate(zip(got, want)) if (a.kind, a.text) != (b.kind, b.text)),
                      min(len(got), len(want)))
        if common > best_len:
            best_len, best = common, f"closest is graph {i}: {_first_difference(got, want)}"
    return None, f"matches no graph of the result ({best})"
