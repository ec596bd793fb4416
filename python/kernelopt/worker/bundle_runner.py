"""Run a bundle (docs/bundle.md): rebuild its problem, feed its modules, run the whole model.

    model, inputs = rebuild_problem(bundle_dir, "cpu")
    args = call_args(bundle_dir, 0, model, inputs)       # one graph's call() arguments
    outputs = run_bundle(bundle_dir, "cpu")              # the model, every graph substituted

run_bundle works for one graph or many (graph breaks) the same way: Dynamo
traces the model again and AOT autograd lowers each graph, but where Inductor
would compile graph k this backend returns module k's call(). AOT's own runtime
wrappers then do what they did around Inductor's module at capture time (order
and deduplication of arguments, outputs that alias inputs, the model's output
structure), so nothing of that is re-implemented here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from .capture.capture_common import DTYPES, build_problem
from .runtime.cpu_runtime import load_module


class BundleError(Exception):
    """A bundle that cannot be run as asked: `what` went wrong and `fix` says what to do."""

    def __init__(self, what: str, fix: str):
        super().__init__(f"{what}; {fix}")


def read_meta(bundle_dir: str | Path) -> dict:
    with open(Path(bundle_dir) / "meta.json", encoding="utf-8") as f:
        return json.load(f)


def rebuild_problem(bundle_dir: str | Path, device: str) -> tuple[torch.nn.Module, list]:
    """(model, inputs) with the weights and inputs capture used: same seed, same dtype override."""
    meta = read_meta(bundle_dir)
    dtype = DTYPES[meta["dtype"]] if meta.get("dtype") else None
    kind = meta.get("input_kind", "module")
    if kind != "module":
        # A kernel file: the "model" runs its original launcher (kernel_files.LauncherModel).
        from .capture.capture_triton import build_kernel_problem

        model, inputs = build_kernel_problem(Path(bundle_dir) / meta["problem"], kind, meta["seed"], device, dtype)
        if kind == "helion":
            from .capture.capture_helion import pin_recorded_configs

            pin_recorded_configs(model, inputs, meta)
        return model, inputs
    # Inputs drawn where capture drew them (on a GPU for bundles that say so), so the same values;
    # CPU mode draws them on the CPU (other values for such bundles: correctness needs no particular ones).
    drawn_on = meta.get("inputs_device", "cpu")
    model, inputs, _ = build_problem(Path(bundle_dir) / meta["problem"], meta["seed"], device, dtype,
                                     inputs_device=drawn_on if drawn_on == device else "cpu")
    return model, inputs


def input_redrawer(bundle_dir: str | Path, device: str):
    """A callable drawing the problem's inputs again on `device`, as rebuild_problem drew them (the
    same seed, the same dtype override), or None where a draw is not made on that device (kernel
    files, inputs drawn on the CPU: seconds per GB, not worth it). The memory plan drops such inputs
    instead of copying them to the host (docs/memory.md); the caller checks that a second draw gives
    the same bytes before relying on it."""
    from .capture.capture_common import draw_inputs, inputs_device_of, load_problem

    meta = read_meta(bundle_dir)
    if is_kernel_file(meta) or device == "cpu" or meta.get("inputs_device", "cpu") != device:
        return None
    dtype = DTYPES[meta["dtype"]] if meta.get("dtype") else None
    module = load_problem(Path(bundle_dir) / meta["problem"])

    def redraw() -> list:
        # No fallback to a CPU draw: seconds per GB, where a dropped input is meant to cost a tenth.
        inputs = draw_inputs(module, meta["seed"], device, fallback=False)
        if inputs_device_of(inputs) != device:
            raise RuntimeError("the problem's inputs were drawn on the CPU this time; they are not redrawn")
        return [x.to(dtype) if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in inputs]

    return redraw


def is_kernel_file(meta: dict) -> bool:
    """A bundle of a Triton or Helion kernel file: one module whose call() takes the launcher's inputs."""
    return meta.get("input_kind", "module") != "module"


def call_args(bundle_dir: str | Path, graph_index: int, model: torch.nn.Module, inputs: list,
              meta: dict | None = None) -> list:
    """The argument list for graph `graph_index`'s call(), from meta.json's mapping.

    A fresh list each time (call() clears it). Arguments made between graphs
    ("intermediate") exist only while the model runs: use run_bundle for those.
    `meta`: the bundle's parsed meta.json, for callers on a per-call path (reading
    the file again costs tens of microseconds per call).
    """
    graph = (meta or read_meta(bundle_dir))["graphs"][graph_index]
    params, buffers = dict(model.named_parameters()), dict(model.named_buffers())
    args = []
    for a in graph["args"]:
        kind = a["kind"]
        if kind == "parameter":
            value = params[a["name"]]
        elif kind == "buffer":
            value = buffers[a["name"]]
        elif kind == "input":
            value = inputs[a["input_index"]]
        elif kind == "scalar":
            value = a["value"]
        else:
            raise BundleError(
                f"argument {a['index']} of graph {graph_index} is {kind!r}, made while the model runs",
                "run the whole model through the bundle with run_bundle()",
            )
        if isinstance(value, torch.Tensor):
            _check_tensor(value, a, f"graph {graph_index} argument {a['index']} ({kind})")
        args.append(value)
    return args


def run_bundle(bundle_dir: str | Path, device: str, config_overrides: dict[int, dict[str, dict]] | None = None) -> Any:
    """Run the bundle's model on its rebuilt inputs with every graph's module substituted.

    config_overrides pins launch configs (CPU mode): {graph index: {kernel name: config}}.
    Returns the model's output, in the model's own structure.
    """
    bundle_dir = Path(bundle_dir)
    meta = read_meta(bundle_dir)
    model, inputs = rebuild_problem(bundle_dir, device)
    overrides = config_overrides or {}
    modules = []
    for k, graph in enumerate(meta["graphs"]):
        path = bundle_dir / graph["module"]
        modules.append(load_module(path.read_text(encoding="utf-8"), str(path), device, overrides.get(k)))
    if is_kernel_file(meta):
        with torch.no_grad():
            return modules[0].call(call_args(bundle_dir, 0, model, inputs, meta))
    backend = BundleBackend(meta["graphs"], modules)
    torch._dynamo.reset()  # graphs cached from an earlier model would skip the backend
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        out = compiled(*inputs)
    if backend.compiled != len(modules):
        raise BundleError(
            f"the model compiled into {backend.compiled} graph(s) here, the bundle holds {len(modules)}",
            "recapture the bundle with this torch version",
        )
    return out


class BundleBackend:
    """A torch.compile backend whose k-th graph runs the bundle's module k."""

    def __init__(self, graphs: list[dict], modules: list):
        self.graphs, self.modules = graphs, modules
        self.compiled = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        from torch._functorch.aot_autograd import aot_module_simplified

        k = self.compiled
        self.compiled += 1
        if k >= len(self.modules):
            raise BundleError(
                f"the model compiled into more graphs than the bundle's {len(self.modules)}",
                "recapture the bundle with this torch version",
            )

        def forward_compiler(aot_gm, aot_inputs):
            self._check_graph(k, aot_inputs)
            call = self.modules[k].call

            def run(args):  # AOT's boxed convention: one list, which call() clears
                return call(list(args))

            run._boxed_call = True
            return run

        # Inductor lowers with input mutations kept inside the graph; so must this, or AOT
        # would expect mutated inputs among the module's outputs.
        return aot_module_simplified(
            gm, example_inputs, fw_compiler=forward_compiler, keep_inference_input_mutations=True
        )

    def _check_graph(self, k: int, aot_inputs: list) -> None:
        recorded = self.graphs[k]["args"]
        if len(aot_inputs) != len(recorded):
            raise BundleError(
                f"graph {k} takes {len(aot_inputs)} arguments here, {len(recorded)} at capture",
                "recapture the bundle with this torch version",
            )
        for value, a in zip(aot_inputs, recorded):
            if isinstance(value, torch.Tensor):
                _check_tensor(value, a, f"graph {k} argument {a['index']}", check_stride=False)


def _check_tensor(t: torch.Tensor, recorded: dict, what: str, check_stride: bool = True) -> None:
    got = {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch.")}
    want = {"shape": recorded.get("shape"), "dtype": recorded.get("dtype")}
    if check_stride:
        got["stride"], want["stride"] = list(t.stride()), recorded.get("stride")
    if got != want:
        raise BundleError(f"{what} is {got}, the bundle recorded {want}", "recapture the bundle or fix meta.json")
