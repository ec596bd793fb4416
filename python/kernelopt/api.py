"""Use an optimized result from Python (docs/python_api.md).

    import kernelopt
    run = kernelopt.load("out/softmax", model)          # the model's forward, optimized modules inside
    y = run(x)

    compiled = torch.compile(model, backend=kernelopt.backend("out/softmax"))
    y = compiled(x)                                      # applied where the generated graph matches

A result (the --out directory of `kernelopt optimize`) is laid out like a bundle
(docs/bundle.md): meta.json, problem.py, module_<i>.py (the optimized modules) and
baseline/module_<i>.py (what Inductor generated at capture). A plain bundle (no
baseline/) is accepted too and runs its captured modules.

load() runs the result's modules on the caller's model and inputs: one graph by
calling the module's call() directly with arguments built from meta.json's
mapping (bundle_runner.call_args), several graphs (graph breaks) through
torch.compile with the worker's _BundleBackend, which hands Dynamo's k-th graph
the result's module k. Inputs whose shapes, dtypes or strides differ from the
recorded ones raise ResultError, or run the model's own forward when the caller
asked for fallback=True.

backend() is a torch.compile backend: Inductor compiles every graph as usual and,
where the module it generates is the same program as a graph of the result's
baseline (match_module: equal token streams, comments ignored), the optimized
module's call() replaces Inductor's. Anything else falls back to Inductor's own
module, which is always safe. Every decision is logged on logger "kernelopt".
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import logging
import re
import textwrap
import types
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from .worker.bundle_ops import _check_versions
from .worker.bundle_runner import BundleError, _BundleBackend, call_args
from .worker.capture import FORMAT, FORMAT_VERSION, _jsonable
from .worker.cpu_runtime import load_module

__all__ = ["ResultError", "Result", "open_result", "load", "LoadedResult", "backend", "ResultBackend",
           "normalize_module", "match_module"]

log = logging.getLogger("kernelopt")

_FIX_SHAPES = ("re-run `kernelopt capture` and `kernelopt optimize` with inputs like these, "
               "or load with fallback=True to run the model's own forward for such inputs")


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


# ---------------------------------------------------------------- load()


def load(path: str | Path, model: torch.nn.Module, device: str | None = None, *, fallback: bool = False) -> "LoadedResult":
    """A callable with `model.forward`'s signature that runs the result's optimized module(s).

    device: "cuda" (the real Inductor runtime) or "cpu" (CPU mode: Triton's interpreter, for testing;
    needs TRITON_INTERPRET=1 before triton is imported); default: "cuda" when the result was captured
    on a GPU and one is visible, else "cpu". The model must be the one the result was optimized for
    (its parameters and buffers are checked against meta.json), in eval mode, on that device.

    Inputs that differ from the recorded ones in shape, dtype or strides raise ResultError, or, with
    fallback=True, run `model`'s own forward (logged). Runs without autograd (inference only).
    """
    result = open_result(path)
    if result.meta.get("input_kind", "module") != "module":
        raise ResultError(f"{result.path} was captured from a {result.meta['input_kind']} kernel file, which has no "
                          "model; use kernelopt.load_launcher(path)")
    dev = _resolve_device(result.meta, device)
    _check_model(result, model, dev)
    return LoadedResult(result, model, dev, fallback)


def _resolve_device(meta: dict, device: str | torch.device | None) -> str:
    captured = meta.get("device", "cuda")
    if device is None:
        device = "cuda" if captured == "cuda" and torch.cuda.is_available() else "cpu"
    try:
        d = torch.device(device)
    except (RuntimeError, TypeError):
        raise ResultError(f"unknown device {device!r}; pass device='cuda' or device='cpu'") from None
    if d.type not in ("cuda", "cpu"):
        raise ResultError(f"device {device!r} is not supported; pass device='cuda' or device='cpu'")
    if d.type == "cuda":
        if d.index not in (None, 0):
            raise ResultError(f"device {device!r}: the result's modules run on cuda:0 (they were generated for it); "
                              "make the GPU visible as device 0 (CUDA_VISIBLE_DEVICES)")
        if not torch.cuda.is_available():
            raise ResultError("device='cuda' but no CUDA GPU is visible; run on a GPU machine, or pass device='cpu' "
                              "(CPU mode: Triton's interpreter, for testing)")
        if captured != "cuda":
            raise ResultError("the result was captured on the CPU (its modules hold C++ kernels); pass device='cpu'")
        try:
            _check_versions(meta, "cuda")
        except BundleError as e:
            raise ResultError(str(e)) from None
    return d.type


def _on(t: torch.Tensor, device: str) -> bool:
    """On `device`; for CUDA on cuda:0, the device the modules were generated for (_DeviceGuard(0))."""
    return t.device.type == device and (device != "cuda" or t.device.index in (None, 0))


def _describe(t: Any) -> str:
    if isinstance(t, torch.Tensor):
        return f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
    return f"{type(t).__name__} {t!r}"[:80]


def _recorded(rec: dict) -> str:
    return f"{rec['dtype']}{rec['shape']}" if "shape" in rec else f"{rec.get('scalar')!r}"


def _check_model(result: Result, model: Any, device: str) -> None:
    if not isinstance(model, torch.nn.Module):
        raise ResultError(f"model is a {type(model).__name__}, not a torch.nn.Module; pass the model the result "
                          f"was optimized for ({result.path / 'problem.py'}'s Model)")
    tensors = {"parameter": dict(model.named_parameters()), "buffer": dict(model.named_buffers())}
    fix = f"pass the model the result was optimized for ({result.path / 'problem.py'}'s Model)"
    for k, graph in enumerate(result.meta["graphs"]):
        for a in graph["args"]:
            if a["kind"] not in tensors:
                continue
            t = tensors[a["kind"]].get(a["name"])
            if t is None:
                raise ResultError(f"the model has no {a['kind']} {a['name']!r}, which graph {k} of the result "
                                  f"takes; {fix}")
            if list(t.shape) != a["shape"] or str(t.dtype).removeprefix("torch.") != a["dtype"]:
                raise ResultError(f"model {a['kind']} {a['name']!r} is {_describe(t)}, the result was optimized for "
                                  f"{_recorded(a)}; {fix}, or re-run `kernelopt capture` and `kernelopt optimize` "
                                  "for this model")
            if list(t.stride()) != a["stride"]:
                raise ResultError(f"model {a['kind']} {a['name']!r} has strides {list(t.stride())}, the result "
                                  f"expects {a['stride']}; make it contiguous (or re-capture this model)")
            if not _on(t, device):
                raise ResultError(f"model {a['kind']} {a['name']!r} is on {t.device}, the result runs on {device}"
                                  f"{':0' if device == 'cuda' else ''}; move the model with model.to({device!r})"
                                  + (" or pass device='cuda'" if t.device.type == "cuda" else ""))
    if model.training:
        raise ResultError("the model is in training mode, the result was captured in eval mode (inference); "
                          "call model.eval() first")
    _warn_if_forward_differs(result, model)


def _warn_if_forward_differs(result: Result, model: torch.nn.Module) -> None:
    """load() trusts that the model is the problem's Model; say so when its forward reads differently."""
    try:
        tree = ast.parse((result.path / result.meta.get("problem", "problem.py")).read_text(encoding="utf-8"))
        theirs = next(f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Model"
                      for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
        ours = ast.parse(textwrap.dedent(inspect.getsource(type(model).forward))).body[0]
    except (OSError, TypeError, SyntaxError, StopIteration, IndexError):
        return  # no forward in problem.py, or no source for the model's: nothing to compare
    if ast.dump(ours) != ast.dump(theirs):
        log.warning("%s.forward differs from Model.forward in %s; load() assumes the model is the one "
                    "the result was optimized for (its parameters match) and runs the result's modules",
                    type(model).__name__, result.path / "problem.py")


@dataclass
class _Bound:
    names: list[str]
    values: list[Any]


class LoadedResult:
    """What load() returns: call it like the model (same inputs), it returns what the model returns.

    `path` ("direct": one graph, its module's call(); "compiled": torch.compile with the result's
    modules) is decided on the first call.
    """

    def __init__(self, result: Result, model: torch.nn.Module, device: str, fallback: bool):
        self.result, self.model, self.device, self.fallback = result, model, device, fallback
        self.meta = result.meta
        self.modules = [load_module(src, str(result.module_path(i)), device) for i, src in enumerate(result.sources)]
        self.__signature__ = inspect.signature(model.forward)
        self._fast_names = _leading_positional(self.__signature__, len(self.meta["inputs"]))
        # per input: (shape, dtype, strides) for tensors, None for other values (checked by equality)
        self._layouts = [(torch.Size(r["shape"]), getattr(torch, r["dtype"], None), tuple(r["stride"])) if "shape" in r
                         else None for r in self.meta["inputs"]]
        self.path: str | None = None
        self._spec = None  # direct path: the output's pytree structure
        self._compiled = None  # compiled path: (compiled model, backend)
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        kind = "optimized result" if self.result.optimized else "bundle"
        return (f"<kernelopt {kind} {self.result.path} for {type(self.model).__name__}, "
                f"{len(self.modules)} graph(s) on {self.device}, path={self.path}>")

    def __call__(self, *args, **kwargs):
        bound = self._bind(args, kwargs)
        problem = self._input_problem(bound)
        if problem is None and self.model.training:
            problem = "the model is in training mode, the result was captured in eval mode (inference)"
            if not self.fallback:
                raise ResultError(f"{problem}; call model.eval(), or load with fallback=True to run the model's "
                                  "own forward in training mode")
        if problem:
            if not self.fallback:
                raise ResultError(f"{problem}; {_FIX_SHAPES}")
            if problem not in self._warned:
                self._warned.add(problem)
                log.warning("%s: running the model's own forward (fallback=True)", problem)
            return self.model(*args, **kwargs)
        inputs = [v.detach() if isinstance(v, torch.Tensor) else v for v in bound.values]
        with torch.no_grad():
            if self.path is None:
                self.path = self._choose_path(inputs)
            if self.path == "direct":
                return self._run_direct(inputs)
            return self._run_compiled(inputs)

    # -- inputs

    def _bind(self, args: tuple, kwargs: dict) -> _Bound:
        if not kwargs and self._fast_names is not None and len(args) == len(self._fast_names):
            return _Bound(self._fast_names, list(args))  # the common call: exactly the recorded inputs
        sig, n = self.__signature__, len(self.meta["inputs"])
        expected = ", ".join(_recorded(r) for r in self.meta["inputs"])

        def wrong(detail: str) -> ResultError:
            return ResultError(f"wrong number of inputs: got {len(args) + len(kwargs)}, the result was optimized for "
                               f"{n} ({expected}) of {type(self.model).__name__}.forward{sig}{detail}; call it with "
                               "the inputs the model was captured with")

        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise wrong(f": {e}") from None
        names, values, extra = [], [], []
        for name, p in sig.parameters.items():
            given = name in bound.arguments
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(name)
                values.append(bound.arguments[name] if given else p.default)
                if given and len(values) > n and not _is_default(bound.arguments[name], p.default):
                    extra.append(name)
            elif p.kind == p.VAR_POSITIONAL:
                for i, v in enumerate(bound.arguments.get(name, ())):
                    names.append(f"{name}[{i}]")
                    values.append(v)
                    if len(values) > n:
                        extra.append(f"{name}[{i}]")
            elif given and (p.kind == p.VAR_KEYWORD or not _is_default(bound.arguments[name], p.default)):
                extra.append(name)
        if len(values) < n or extra:
            raise wrong(f": {', '.join(extra)} not among them" if extra else "")
        return _Bound(names[:n], values[:n])

    def _input_problem(self, bound: _Bound) -> str | None:
        for i, (name, v, rec, layout) in enumerate(zip(bound.names, bound.values, self.meta["inputs"],
                                                       self._layouts)):
            if (layout is not None and isinstance(v, torch.Tensor) and v.shape == layout[0] and v.dtype is layout[1]
                    and v.stride() == layout[2] and _on(v, self.device)):
                continue  # the common case, checked quickly
            if "shape" not in rec:
                try:
                    same = not isinstance(v, torch.Tensor) and _jsonable(v) == rec.get("scalar")
                except Exception:  # noqa: BLE001 - an object _jsonable cannot describe is not the recorded value
                    same = False
                if not same:
                    return f"input {i} ({name}) is {_describe(v)}, the result was captured with {rec.get('scalar')!r}"
                continue
            if not isinstance(v, torch.Tensor):
                return f"input {i} ({name}) is {_describe(v)}, the result was optimized for a tensor {_recorded(rec)}"
            if list(v.shape) != rec["shape"] or str(v.dtype).removeprefix("torch.") != rec["dtype"]:
                return f"input {i} ({name}) is {_describe(v)}, the result was optimized for {_recorded(rec)}"
            if not _on(v, self.device):
                raise ResultError(f"input {i} ({name}) is on {v.device}, the result runs on {self.device}"
                                  f"{':0' if self.device == 'cuda' else ''}; move it with .to({self.device!r})")
            if list(v.stride()) != rec["stride"]:
                return (f"input {i} ({name}) has strides {list(v.stride())}, the result was optimized for "
                        f"{rec['stride']} (pass a tensor with that layout, e.g. .contiguous())")
        return None

    # -- running

    def _choose_path(self, inputs: list) -> str:
        graphs = self.meta["graphs"]
        if len(graphs) > 1:
            log.info("%s: %d graphs (graph breaks): running through torch.compile",
                     self.result.path, len(graphs))
            return "compiled"
        why = self._direct_blocker(inputs)
        if why:
            log.info("%s: running through torch.compile: %s", self.result.path, why)
            return "compiled"
        return "direct"

    def _direct_blocker(self, inputs: list) -> str | None:
        """Why calling module 0's call() directly could differ from what the model returns, if it could.

        Direct is exact when call() takes only parameters, buffers, inputs and scalars, and returns the
        model's outputs (its pytree leaves, none of them an alias of an input or parameter) in order:
        learned once by running the forward on fake tensors (no data, no kernels).
        """
        graph = self.meta["graphs"][0]
        kinds = {a["kind"] for a in graph["args"]} - {"parameter", "buffer", "input", "scalar"}
        if kinds:
            return f"call() takes {', '.join(sorted(kinds))} arguments"
        from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
        from torch.utils._pytree import tree_flatten

        try:
            with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                fake = [mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
                leaves, spec = tree_flatten(self.model(*fake))
        except Exception as e:  # noqa: BLE001 - any failure only means: take the general path
            return f"the forward does not run on fake tensors ({type(e).__name__})"
        recorded = graph["outputs"]
        if len(leaves) != len(recorded):
            return f"the model returns {len(leaves)} value(s), call() {len(recorded)}"
        for leaf, rec in zip(leaves, recorded):
            if not isinstance(leaf, FakeTensor) or any(leaf is f for f in fake) or leaf._is_view():
                return "the model returns a non-tensor, an input, a parameter or a view"
            if "shape" not in rec or [list(leaf.shape), str(leaf.dtype).removeprefix("torch.")] != \
                    [rec["shape"], rec["dtype"]]:
                return "call()'s outputs are not the model's outputs in order"
        self._spec = spec
        return None

    def _run_direct(self, inputs: list):
        from torch.utils._pytree import tree_unflatten

        try:
            args = call_args(self.result.path, 0, self.model, inputs, self.result.meta)
        except BundleError as e:
            raise ResultError(f"{e} (did the model change since load()?)") from None
        return tree_unflatten(list(self.modules[0].call(args)), self._spec)

    def _run_compiled(self, inputs: list):
        first = self._compiled is None
        if first:
            backend = _BundleBackend(self.meta["graphs"], self.modules)
            self._compiled = (torch.compile(self.model, backend=backend, dynamic=False), backend)
        compiled, backend = self._compiled
        try:
            out = compiled(*inputs)
        except Exception as e:
            cause = _bundle_error_in(e)
            if cause is not None:
                raise ResultError(f"{cause} (the model compiled into other graphs than at capture)") from e
            raise
        if first and backend.compiled != len(self.modules):
            self._compiled = None
            raise ResultError(
                f"torch.compile cut the model into {backend.compiled} graph(s) here, the result holds "
                f"{len(self.modules)}; re-run `kernelopt capture` and `kernelopt optimize` with this torch "
                "(or, if this process compiled the model many times, call torch._dynamo.reset())")
        return out


def _leading_positional(sig: inspect.Signature, n: int) -> list[str] | None:
    """Names of the first n parameters when a call with exactly n positional arguments binds them
    one to one (the rest keep their defaults); None when it would not (e.g. `*args` among them)."""
    params = list(sig.parameters.values())
    head, rest = params[:n], params[n:]
    if len(head) < n or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in head):
        return None
    if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in rest):
        return None
    return [p.name for p in head]


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    if isinstance(value, torch.Tensor) or isinstance(default, torch.Tensor) or default is inspect.Parameter.empty:
        return False
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001
        return False


def _bundle_error_in(e: BaseException) -> BaseException | None:
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, BundleError):
            return e
        e = getattr(e, "inner_exception", None) or e.__cause__ or e.__context__
    return None


# ---------------------------------------------------------------- backend()


def backend(path: str | Path) -> "ResultBackend":
    """A torch.compile backend: Inductor, with the result's optimized modules where a graph matches.

        compiled = torch.compile(model, backend=kernelopt.backend("out/softmax"))

    Inductor runs with the result's recorded config patches (its --mode). Each module Inductor
    generates is compared with the result's baseline modules (match_module); on a match the
    optimized module is loaded and its call() becomes the compiled graph's callable, otherwise
    Inductor's own module runs. Decisions are logged on logger "kernelopt" and kept in `.decisions`.
    """
    return ResultBackend(open_result(path))


@dataclass
class Decision:
    graph: int  # this backend's n-th compiled graph (forward and backward count separately)
    applied: bool
    result_graph: int | None  # which graph of the result it matched
    reason: str


class ResultBackend:
    """See backend(). `compile_inner` is Inductor's compile_fx_inner (replaceable in tests)."""

    def __init__(self, result: Result):
        self.result = result
        self.decisions: list[Decision] = []
        self._baselines = [normalize_module(b) for b in result.baselines]

    @staticmethod
    def compile_inner(gm, example_inputs, **kwargs):
        from torch._inductor.compile_fx import compile_fx_inner

        return compile_fx_inner(gm, example_inputs, **kwargs)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        patches = dict(self.result.meta.get("inductor_config") or {})
        # An AOT autograd cache hit would return a cached module without calling inner():
        # the graph would silently run Inductor's module. Off while this backend compiles.
        with torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, inner_compile=self._inner, config_patches=patches)

    def _inner(self, gm, example_inputs, **kwargs):
        compiled = self.compile_inner(gm, example_inputs, **kwargs)
        n = len(self.decisions)
        try:
            decision = self._apply(n, compiled, kwargs)
        except Exception as e:  # noqa: BLE001 - failing to apply is never worse than Inductor's module
            decision = Decision(n, False, None, f"applying failed ({type(e).__name__}: {e})")
        self.decisions.append(decision)
        if decision.applied:
            log.info("graph %d: applied %s (%s)", n, self.result.module_path(decision.result_graph),
                     decision.reason)
        else:
            log.info("graph %d: fell back to Inductor's module: %s", n, decision.reason)
        return compiled

    def _apply(self, n: int, compiled, kwargs: dict) -> Decision:
        if kwargs.get("is_backward"):
            return Decision(n, False, None, "a backward graph (the result holds inference graphs)")
        source = getattr(compiled, "source_code", None)
        if not isinstance(source, str):
            return Decision(n, False, None, f"Inductor produced no Python module ({type(compiled).__name__})")
        index, why = match_module(source, self._baselines)
        if index is None:
            return Decision(n, False, None, f"the generated module {why}")
        current = getattr(compiled, "current_callable", None)
        found = _find_module_call(current)
        if found is None:
            return Decision(n, False, index, f"Inductor wrapped the module's call() in "
                            f"{getattr(current, '__qualname__', type(current).__name__)} (cudagraphs?), which "
                            "replacing it would drop")
        call, rewrap = found
        device = "cuda" if "cuda" in (getattr(compiled, "device_types", None) or ()) else "cpu"
        module = self._load(index, device)
        # Names Inductor attached to its module after loading it (graph constants): the same here.
        for name, value in _globals_of(call).items():
            if not hasattr(module, name):
                setattr(module, name, value)
        compiled.current_callable = rewrap(module.call)
        if compiled.current_callable is not module.call:
            why += "; Inductor's input realignment kept around it"
        if hasattr(compiled, "compiled_fn_runner"):
            compiled.compiled_fn_runner = getattr(module, "runner", None)
        if hasattr(compiled, "recursively_apply_fns"):
            compiled.recursively_apply_fns = getattr(module, "recursively_apply_fns", None)
        return Decision(n, True, index, why)

    def _load(self, index: int, device: str):
        source, path = self.result.sources[index], str(self.result.module_path(index))
        if device == "cuda":
            from torch._inductor.codecache import PyCodeCache

            # A module of its own (attrs={} is never shared), as Inductor loads modules with constants.
            key, file = PyCodeCache.write(source)
            return PyCodeCache.load_by_key_path(key, file, attrs={})
        return load_module(source, path, device)


def _globals_of(fn: Callable) -> dict:
    return getattr(getattr(fn, "__func__", fn), "__globals__", {})


def _is_module_call(fn: Any) -> bool:
    """`fn` is the `call` of a generated module (`call = runner.call`, or a plain `def call`)."""
    return callable(fn) and _globals_of(fn).get("call") == fn


# Inductor's input realignment (torch._inductor.utils.align_inputs_from_check_idxs): a closure
# `run(new_inputs)` that copies misaligned inputs, calls the module's call() and copies mutated
# ones back. Kept around the optimized call(): its kernels make the same alignment assumptions.
_REALIGN = "align_inputs_from_check_idxs.<locals>.run"


def _find_module_call(fn: Any) -> tuple[Callable, Callable[[Callable], Callable]] | None:
    """(the module's call() inside `fn`, a function putting another call() in its place), or None
    when `fn` is a wrapper this backend does not know (cudagraphs, compiled-region wrappers)."""
    if _is_module_call(fn):
        return fn, lambda new: new
    if getattr(fn, "__qualname__", "").endswith(_REALIGN) and getattr(fn, "__closure__", None):
        cells = fn.__closure__
        inner = [i for i, c in enumerate(cells) if _is_module_call(c.cell_contents)]
        if len(inner) == 1:
            def rewrap(new: Callable) -> Callable:
                closure = tuple(types.CellType(new) if i == inner[0] else c for i, c in enumerate(cells))
                return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, closure)

            return cells[inner[0]].cell_contents, rewrap
    return None
