"""kernelopt.backend(): a torch.compile backend that applies a result where a graph matches.

Inductor compiles every graph as usual; where the module it generates is the same program as a
graph of the result's baseline (api_result.match_module), the optimized module's call() replaces
Inductor's. Kept apart from load() (api.py): it shares only the result reading and matching
(api_result.py), and its work is reaching into Inductor's compiled-graph objects.
"""

from __future__ import annotations

import logging
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from .api_result import Result, match_module, normalize_module, open_result
from .worker.runtime.cpu_runtime import load_module

__all__ = ["backend", "named_backend", "ResultBackend", "Decision"]

log = logging.getLogger("kernelopt")


def backend(path: str | Path) -> "ResultBackend":
    """A torch.compile backend: Inductor, with the result's optimized modules where a graph matches.

        compiled = torch.compile(model, backend=kernelopt.backend("out/softmax"))

    Inductor runs with the result's recorded config patches (its --mode). Each module Inductor
    generates is compared with the result's baseline modules (match_module); on a match the
    optimized module is loaded and its call() becomes the compiled graph's callable, otherwise
    Inductor's own module runs. Decisions are logged on logger "kernelopt" and kept in `.decisions`.
    """
    return ResultBackend(open_result(path))


# The backends the name "kernelopt" made, one per result directory: torch.compile calls the named
# backend once per graph, and one result's decisions belong together (named_backend.backends).
_NAMED: dict[Path, "ResultBackend"] = {}


def named_backend(gm: torch.fx.GraphModule, example_inputs, options: dict | None = None, mode: str | None = None):
    """`torch.compile(model, backend="kernelopt", options={"result": DIR})`: backend(DIR) under a name
    (the `torch_dynamo_backends` entry point in pyproject.toml). Its decisions are in
    `named_backend.backends[Path(DIR).resolve()].decisions`."""
    opts = dict(options or {})
    result = opts.pop("result", None)
    if result is None:
        raise ValueError('backend="kernelopt" needs options={"result": DIR}, DIR a directory written by '
                         "`kernelopt optimize`")
    if opts:
        raise ValueError(f'backend="kernelopt": unknown option(s) {sorted(opts)}; the only option is "result"')
    if mode is not None:
        raise ValueError(f'backend="kernelopt": mode={mode!r} is not taken; the result\'s own torch.compile '
                         "mode (recorded when it was captured) applies")
    key = Path(result).resolve()
    if key not in _NAMED:
        _NAMED[key] = backend(key)
    return _NAMED[key](gm, example_inputs)


named_backend.backends = _NAMED


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
