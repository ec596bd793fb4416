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
torch.compile with the worker's BundleBackend, which hands Dynamo's k-th graph
the result's module k. Inputs whose shapes, dtypes or strides differ from the
recorded ones raise ResultError, or run the model's own forward when the caller
asked for fallback=True.

backend() is a torch.compile backend: Inductor compiles every graph as usual and,
where the module it generates is the same program as a graph of the result's
baseline (match_module: equal token streams, comments ignored), the optimized
module's call() replaces Inductor's. Anything else falls back to Inductor's own
module, which is always safe. Every decision is logged on logger "kernelopt".

The code is in three files: api_result.py reads a result and matches modules
(open_result, Result, normalize_module, match_module, ResultError), this file
holds load() and LoadedResult, and api_backend.py the torch.compile backend.
Every public name is importable from here (kernelopt/__init__.py, api_kernels.py).
"""

from __future__ import annotations

import ast
import copy
import inspect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .api_backend import ResultBackend, backend
from .api_result import Result, ResultError, match_module, normalize_module, open_result
from .worker.bundle_runner import BundleError, BundleBackend, call_args
from .worker.bundle_state import check_versions
from .worker.capture.capture_common import _jsonable
from .worker.runtime.cpu_runtime import load_module

__all__ = ["ResultError", "Result", "open_result", "load", "LoadedResult", "backend", "ResultBackend",
           "normalize_module", "match_module"]

log = logging.getLogger("kernelopt")

_FIX_SHAPES = ("re-run `kernelopt capture` and `kernelopt optimize` with inputs like these, "
               "or load with fallback=True to run the model's own forward for such inputs")


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
            check_versions(meta, "cuda")
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
        ours = _parse_function(type(model).forward)
    except (OSError, TypeError, SyntaxError, StopIteration, IndexError):
        return  # no forward in problem.py, or no source for the model's: nothing to compare
    if _function_dump(ours) != _function_dump(theirs):
        log.warning("%s.forward differs from Model.forward in %s; load() assumes the model is the one "
                    "the result was optimized for (its parameters match) and runs the result's modules",
                    type(model).__name__, result.path / "problem.py")


def _parse_function(fn: Any) -> ast.FunctionDef:
    """fn's def parsed from its source text as written.

    The text is not re-indented: textwrap.dedent would rewrite a docstring's whitespace-only lines
    (its constant then differs from problem.py's) and cannot dedent a def whose docstring has a line
    indented less than the def (a syntax error). An indented def is parsed as the body of an `if`
    instead; lines inside string literals are not subject to indentation.
    """
    source = inspect.getsource(fn)
    if source[:1] in (" ", "\t"):
        node = ast.parse("if 1:\n" + source).body[0].body[0]
    else:
        node = ast.parse(source).body[0]
    if not isinstance(node, ast.FunctionDef):
        raise TypeError(f"{fn!r} is not defined by a def")
    return node


def _function_dump(fn: ast.FunctionDef) -> str:
    """The def as compared: its AST without its docstring (like comments, a docstring computes nothing)."""
    if ast.get_docstring(fn, clean=False) is not None:
        fn = copy.copy(fn)
        fn.body = fn.body[1:]
    return ast.dump(fn)


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
            backend = BundleBackend(self.meta["graphs"], self.modules)
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
