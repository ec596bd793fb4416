"""The include and import graph keeps its layers (docs/layers.md): no edge from a lower layer to a higher
one, no cycle. Engine: every `#include "..."` under engine/src, a top-level folder being a layer. Python:
every import under python/kernelopt (module level and inside functions), a module being a node. The layer
orders are read from docs/layers.md; the known exceptions are the allowlists below, each with its reason.
A new upward edge or a new cycle fails; so does an allowlist entry that no longer exists (remove it)."""

from __future__ import annotations

import ast
import pathlib
import re
from collections import defaultdict

from conftest import ROOT

LAYERS_DOC = ROOT / "docs" / "layers.md"
ENGINE_SRC = ROOT / "engine" / "src"
PYTHON_ROOT = ROOT / "python"

Edge = tuple[str, str]  # (from, to): engine layers, or Python modules

# ---------------------------------------------------------------------------------------------------------------
# Allowlists: the known exceptions, each with why it is there. Keep them short; a fix removes the entry.

# Engine, upward includes (from layer, to layer). Empty: stitch/stitch.cpp used to include
# agents/coder/pin_config.h; pinning a config into a kernel source moved beside the IR (artifact/pin_config.h).
ENGINE_UPWARD_ALLOWED: dict[Edge, str] = {}

# Engine, includes that lie on a cycle between layers. Empty: no two layers depend on each other.
ENGINE_CYCLE_ALLOWED: dict[Edge, str] = {}

# Python, upward imports (a worker module importing the API, or a worker layer a higher one). Empty.
PYTHON_UPWARD_ALLOWED: dict[Edge, str] = {}

# Python, imports that lie on a cycle between modules. Empty: the capture dispatch cycle (capture -> kernel_files
# -> capture, and back through capture_triton / capture_helion) went when kernel_files and the kernel-file capture
# paths took the shared pieces (CaptureError, ...) from capture_common, which imports no other capture module.
PYTHON_CYCLE_ALLOWED: dict[Edge, str] = {}

# ---------------------------------------------------------------------------------------------------------------
# The layer orders (docs/layers.md)


def read_layers(doc: pathlib.Path, heading: str) -> list[str]:
    """The numbered list "1. `name` ..." under the `## <heading>...` section, lowest first."""
    layers, inside = [], False
    for line in doc.read_text().splitlines():
        if line.startswith("## "):
            inside = line[3:].startswith(heading)
        elif inside and (m := re.match(r"\d+\. `([^`]+)`", line)):
            layers.append(m.group(1))
    assert layers, f"{doc}: no numbered layer list under '## {heading}'"
    assert len(set(layers)) == len(layers), f"{doc}: a layer is listed twice: {layers}"
    return layers


# ---------------------------------------------------------------------------------------------------------------
# The graphs: edge -> where it comes from ("file: line"), for the failure messages

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".inc"}


def engine_layer(src: pathlib.Path, path: pathlib.Path) -> str:
    """A file's layer: its top-level folder under `src`, or the file's own name at the top (main.cpp)."""
    return path.relative_to(src).parts[0]


def engine_graph(src: pathlib.Path) -> dict[Edge, list[str]]:
    """Include edges between layers (a layer's includes of itself left out). An include is resolved against
    `src` (the include root) and then the including file's folder; one that resolves to neither fails."""
    src = src.resolve()
    edges: dict[Edge, list[str]] = defaultdict(list)
    unresolved = []
    for path in sorted(p.resolve() for p in src.rglob("*") if p.suffix in _SOURCE_SUFFIXES and p.is_file()):
        for m in _INCLUDE.finditer(path.read_text(errors="replace")):
            target = next((t for t in (src / m.group(1), path.parent / m.group(1)) if t.is_file()), None)
            where = f"{path.relative_to(src)}: #include \"{m.group(1)}\""
            if target is None or src not in target.resolve().parents:
                unresolved.append(where)
                continue
            a, b = engine_layer(src, path), engine_layer(src, target.resolve())
            if a != b:
                edges[(a, b)].append(where)
    assert not unresolved, "includes that name no file under engine/src:\n" + "\n".join(unresolved)
    return dict(edges)


def python_modules(root: pathlib.Path, package: str) -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every .py under root/package (a package is its __init__.py)."""
    mods = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def python_graph(root: pathlib.Path, package: str) -> dict[Edge, list[str]]:
    """Import edges between the package's modules, from every import statement (module level, inside
    functions, under `if`), found with `ast` (so code inside string literals is not an import). `from P import
    N` is an edge to P.N when that is a module, else to P; an import of a name the package does not hold as a
    module goes to its nearest enclosing module."""
    mods = python_modules(root, package)
    edges: dict[Edge, list[str]] = defaultdict(list)

    def nearest(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]  # the package relative imports start from
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here[: len(here) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for t in targets:
                if not (t == package or t.startswith(package + ".")):
                    continue  # outside the package: torch, triton, the standard library
                dst = nearest(t)
                if dst and dst != mod:
                    edges[(mod, dst)].append(f"{path.relative_to(root)}:{node.lineno}: imports {t}")
    return dict(edges)


# ---------------------------------------------------------------------------------------------------------------
# The checks


def layer_of(node: str, layers: list[str]) -> str | None:
    """The longest listed layer that `node` is or starts with (dotted names); None when none is."""
    best = None
    for layer in layers:
        if (node == layer or node.startswith(layer + ".")) and (best is None or len(layer) > len(best)):
            best = layer
    return best


def upward_edges(edges, layers: list[str]) -> set[Edge]:
    rank = {layer: i for i, layer in enumerate(layers)}
    return {(a, b) for a, b in edges if rank[layer_of(a, layers)] < rank[layer_of(b, layers)]}


def cyclic_edges(edges) -> set[Edge]:
    """The edges that lie on some cycle: both ends in one strongly connected component (Tarjan)."""
    succ = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    nodes = sorted({n for e in edges for n in e})
    index, low, comp, stack, on_stack = {}, {}, {}, [], set()
    counter = 0

    def visit(v):  # recursion depth is bounded by the number of modules/layers (tens)
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp[w] = v
                if w == v:
                    break

    for n in nodes:
        if n not in index:
            visit(n)
    return {(a, b) for a, b in edges if a != b and comp[a] == comp[b]}


def cycle_through(edges, edge: Edge) -> list[str]:
    """One cycle through `edge` (a, b): a, b, ..., a, by the shortest path from b back to a."""
    succ = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    a, b = edge
    prev, frontier = {b: None}, [b]
    while frontier and a not in prev:
        nxt = []
        for v in frontier:
            for w in sorted(succ[v]):
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    path, v = [], a
    while v is not None:
        path.append(v)
        v = prev.get(v)
    return [a] + path[::-1]


def violations(edges: dict[Edge, list[str]], layers: list[str], upward_allowed, cycle_allowed) -> list[str]:
    """Every node without a layer, every upward edge and every edge on a cycle that its allowlist does not
    name, with where it comes from; empty when the graph keeps its layers."""
    out = []
    nodes = sorted({n for e in edges for n in e})
    for n in nodes:
        if layer_of(n, layers) is None:
            out.append(f"{n}: in no layer; place it in docs/layers.md")
    if out:
        return out
    for e in sorted(upward_edges(edges, layers) - set(upward_allowed)):
        out.append(f"upward edge {e[0]} -> {e[1]} ({layer_of(e[0], layers)} is below {layer_of(e[1], layers)}): "
                   + "; ".join(edges[e][:3]))
    for e in sorted(cyclic_edges(edges) - set(cycle_allowed)):
        out.append(f"cycle {' -> '.join(cycle_through(edges, e))}, through {e[0]} -> {e[1]}: " + "; ".join(edges[e][:3]))
    return out


def stale(edges, layers, upward_allowed, cycle_allowed) -> list[str]:
    """Allowlist entries that are no longer upward edges or edges on a cycle: fixed, so they must go."""
    up, cyc = upward_edges(edges, layers), cyclic_edges(edges)
    return ([f"upward {e}: no longer an upward edge" for e in sorted(set(upward_allowed) - up)]
            + [f"cycle {e}: no longer on a cycle" for e in sorted(set(cycle_allowed) - cyc)])


# ---------------------------------------------------------------------------------------------------------------
# The tests


def engine_layers() -> list[str]:
    return read_layers(LAYERS_DOC, "Engine")


def python_layers() -> list[str]:
    return read_layers(LAYERS_DOC, "Python")


def test_every_engine_folder_is_a_layer():
    """A new top-level folder (or top-level file) must be placed in docs/layers.md; a listed one must exist."""
    present = {p.name for p in ENGINE_SRC.iterdir() if p.is_dir() or p.suffix in _SOURCE_SUFFIXES}
    assert present == set(engine_layers()), (present ^ set(engine_layers()))


def test_every_worker_subpackage_is_a_layer():
    """A new subpackage of the worker must be placed in docs/layers.md (else it would silently share the core's
    layer, `kernelopt.worker`); every listed Python layer must be a module or package that exists."""
    mods = python_modules(PYTHON_ROOT, "kernelopt")
    subpackages = {m for m, path in mods.items() if path.name == "__init__.py" and m.startswith("kernelopt.worker.")}
    layers = python_layers()
    assert subpackages <= set(layers), f"not in docs/layers.md: {sorted(subpackages - set(layers))}"
    assert set(layers) <= set(mods), f"listed in docs/layers.md but not under python/: {sorted(set(layers) - set(mods))}"


def test_engine_includes_keep_their_layers():
    edges = engine_graph(ENGINE_SRC)
    assert edges, "no include edges found: is engine/src where it was?"
    problems = violations(edges, engine_layers(), ENGINE_UPWARD_ALLOWED, ENGINE_CYCLE_ALLOWED)
    assert not problems, "\n".join(problems)


def test_python_imports_keep_their_layers():
    edges = python_graph(PYTHON_ROOT, "kernelopt")
    assert edges, "no import edges found: is python/kernelopt where it was?"
    problems = violations(edges, python_layers(), PYTHON_UPWARD_ALLOWED, PYTHON_CYCLE_ALLOWED)
    assert not problems, "\n".join(problems)


def test_allowlists_name_only_current_exceptions():
    found = stale(engine_graph(ENGINE_SRC), engine_layers(), ENGINE_UPWARD_ALLOWED, ENGINE_CYCLE_ALLOWED)
    found += stale(python_graph(PYTHON_ROOT, "kernelopt"), python_layers(), PYTHON_UPWARD_ALLOWED,
                   PYTHON_CYCLE_ALLOWED)
    assert not found, "remove from test_layers.py's allowlists:\n" + "\n".join(found)


def test_checker_catches_an_upward_edge_and_a_cycle():
    layers = ["low", "mid", "high"]
    fine = {("high", "mid"): ["h"], ("mid", "low"): ["m"]}
    assert violations(fine, layers, {}, {}) == []
    # One upward edge, which closes the cycle low -> high -> mid -> low.
    bad = {**fine, ("low", "high"): ["low.cpp: #include \"high/x.h\""]}
    problems = violations(bad, layers, {}, {})
    assert any(p.startswith("upward edge low -> high") for p in problems), problems
    assert any(p.startswith("cycle low -> high -> mid -> low") for p in problems), problems
    assert cyclic_edges(bad) == {("low", "high"), ("high", "mid"), ("mid", "low")}
    # Allowlisted, it passes; a second cycle among the same nodes (mid -> high) is new and fails.
    up_ok, cyc_ok = {("low", "high"): "why"}, {e: "why" for e in cyclic_edges(bad)}
    assert violations(bad, layers, up_ok, cyc_ok) == []
    worse = {**bad, ("mid", "high"): ["m2"]}
    problems = violations(worse, layers, up_ok, cyc_ok)
    assert any(p.startswith("upward edge mid -> high") for p in problems), problems
    assert any("through mid -> high" in p for p in problems), problems
    # A cycle within one layer (no upward edge) is caught too, and an unplaced node is named.
    same = {("low.a", "low.b"): ["a"], ("low.b", "low.a"): ["b"]}
    assert [p.split(",")[0] for p in violations(same, layers, {}, {})] == ["cycle low.a -> low.b -> low.a",
                                                                           "cycle low.b -> low.a -> low.b"]
    assert violations({("elsewhere", "low"): ["e"]}, layers, {}, {}) == ["elsewhere: in no layer; place it in "
                                                                         "docs/layers.md"]
    assert stale(fine, layers, up_ok, cyc_ok)  # entries for edges that are gone


def test_parsers_find_includes_and_imports(tmp_path):
    """The graphs read from files: a synthetic engine tree with an upward include, and a synthetic package with
    an import cycle closed inside a function; imports inside string literals are not imports."""
    src = tmp_path / "src"
    for rel, text in {"util/error.h": "#pragma once\n", "cli/run.h": '#include "util/error.h"\n',
                      "util/bad.cpp": '#include "util/error.h"\n  #  include "cli/run.h"  // upward\n',
                      "main.cpp": '#include "cli/run.h"\n#include <vector>\n'}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    edges = engine_graph(src)
    assert set(edges) == {("cli", "util"), ("util", "cli"), ("main.cpp", "cli")}
    problems = violations(edges, ["util", "cli", "main.cpp"], {}, {})
    assert [p.split(":")[0].split(",")[0] for p in problems] == [
        "upward edge util -> cli (util is below cli)", "cycle cli -> util -> cli", "cycle util -> cli -> util"]
    assert problems[0].endswith('util/bad.cpp: #include "cli/run.h"'), problems[0]

    pkg = tmp_path / "py" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from . import b\nTEMPLATE = '''\nfrom pkg import api\n'''\n")
    (pkg / "sub" / "b.py").write_text("import os\n\ndef f():\n    from .a import TEMPLATE\n    return TEMPLATE\n")
    (pkg / "api.py").write_text("from .sub.a import TEMPLATE\nimport pkg.sub.b\n")
    edges = python_graph(tmp_path / "py", "pkg")
    assert set(edges) == {("pkg.sub.a", "pkg.sub.b"), ("pkg.sub.b", "pkg.sub.a"), ("pkg.api", "pkg.sub.a"),
                          ("pkg.api", "pkg.sub.b")}
    assert cyclic_edges(edges) == {("pkg.sub.a", "pkg.sub.b"), ("pkg.sub.b", "pkg.sub.a")}
    assert violations(edges, ["pkg.sub", "pkg"], {}, {e: "known" for e in cyclic_edges(edges)}) == []
    assert upward_edges({("pkg.sub.a", "pkg.api"): []}, ["pkg.sub", "pkg"]) == {("pkg.sub.a", "pkg.api")}
