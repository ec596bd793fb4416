"""The bundles a worker keeps between requests, and what it builds from them once: a loaded bundle
(keyed by its directory) with its modules and launch records, the rebuilt problem, the compiled model,
the reference outputs every candidate is compared with, compiled candidate kernels and stitched modules.
The request handlers (ops/) read and extend it; a loaded bundle stays until `forget_bundles`, so the launch
records and modules are made once per worker, not once per request.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .bundle_runner import (BundleError, BundleBackend, call_args, input_redrawer, is_kernel_file, read_meta,
                            rebuild_problem)
from .measure import compare as cmp
from .measure import memory
from .measure.float64_mode import float64_everywhere
from .measure.launches import LaunchRecord, kernel_decls, kernel_vars
from .protocol import device
from .runtime.cpu_runtime import load_kernel, load_module


@dataclass
class BundleState:
    dir: Path
    meta: dict
    device: str
    sources: list[str]
    modules: list
    launches: list[LaunchRecord] = field(default_factory=list)
    # (model, inputs, buffer snapshot) per dtype override, built once: see problem_of().
    problems: dict = field(default_factory=dict)
    # The outputs every candidate is compared with, computed once, each a memory.HeldTree (counted as
    # held, spilled to the host when the device needs the room): see reference().
    references: dict = field(default_factory=dict)
    # The baseline against itself run again, per tolerance set: see baseline_self().
    self_checks: dict = field(default_factory=dict)
    # The last compiled model (modules' identity, Dynamo epoch, compiled model, modules): see model_runner().
    runner: tuple | None = None
    # What a run of each kind ("eager"/"model", dtype) took above what was in use, as measured the
    # last time one ran (memory.measured_peak): the next one reserves at least that.
    run_needs: dict = field(default_factory=dict)
    # Where the eager model last ran: "device", or "host" when its run would pass the soft target.
    eager_device: str | None = None

    def launch(self, graph: int, kernel: str, index: int) -> LaunchRecord:
        for rec in self.launches:
            if rec.graph == graph and (rec.kernel == kernel or self.kernel_name(graph, rec.kernel) == kernel) \
                    and rec.index == index:
                return rec
        raise KeyError(f"no launch #{index} of kernel {kernel!r} in graph {graph}; run `record_launches` first "
                       f"or check the name with `kernelopt inspect`")

    def kernel_name(self, graph: int, var: str) -> str:
        return self.modules[graph].__kernel_vars__.get(var, var)


loaded_bundles: dict[str, BundleState] = {}


def check_versions(meta: dict, dev: str) -> None:
    """Refuses a bundle whose modules this worker's torch cannot run on `dev` (the API checks a result so too)."""
    captured = meta.get("versions", {}).get("torch", "")
    here = torch.__version__
    # On the GPU the module runs on Inductor's own runtime, which changes between
    # minor versions; CPU mode uses kernelopt's launcher and only needs the sources.
    if dev == "cuda" and captured.split(".")[:2] != here.split(".")[:2]:
        raise BundleError(f"bundle captured with torch {captured}, this worker runs torch {here}",
                          "re-capture the bundle with this torch (kernelopt capture)")


def _load_modules(bundle: Path, meta: dict, dev: str, configs: dict | None = None) -> tuple[list[str], list]:
    sources, modules = [], []
    for k, graph in enumerate(meta["graphs"]):
        path = bundle / graph["module"]
        src = path.read_text(encoding="utf-8")
        module = load_module(src, str(path), dev, (configs or {}).get(k))
        module.__kernel_vars__ = kernel_vars(src)
        sources.append(src)
        modules.append(module)
    return sources, modules


def get_bundle(req: dict) -> BundleState:
    key = str(Path(req["bundle"]).resolve())
    state = loaded_bundles.get(key)
    if state is None:
        bundle = Path(key)
        if not (bundle / "meta.json").exists():
            raise BundleError(f"{bundle}: no meta.json", "pass a bundle directory made by `kernelopt capture`")
        meta = read_meta(bundle)
        dev = device()
        check_versions(meta, dev)
        sources, modules = _load_modules(bundle, meta, dev)
        state = loaded_bundles[key] = BundleState(bundle, meta, dev, sources, modules)
    return state


class _Problem(memory.Spillable):
    """The rebuilt model, its inputs and its buffers as built. The inputs and the buffer snapshot
    may move to the host between model runs (every run gets fresh device copies of them anyway);
    the model's own weights stay on the device and are counted as held. Inputs drawn on the device
    under their seed (`redraw`) are dropped instead and drawn again when next needed: a draw of
    several GB takes a tenth of a second on the GPU, a copy to the host and back seconds."""

    def __init__(self, model: torch.nn.Module, inputs: list, snapshot: dict, device: str, redraw=None,
                 needs: dict | None = None):
        self.model, self.inputs, self.snapshot = model, inputs, snapshot
        self.device = torch.device(device)
        self.redraw = redraw
        self.needs = dict(needs or {})  # "draw": the most a draw allocated (memory.measured_peak)
        super().__init__()

    def _draw(self) -> list:
        """The inputs drawn again, with room made first for what a draw allocates: the problem's own
        temporaries of drawing come on top of the inputs (a scaled and exponentiated fp16 input: two of
        its size), and beside a launch record sharing the last run's inputs they put three inputs' worth
        on the device (a 3.9 GB product at 3.0x torch.compile's peak)."""
        # Measured by the check that a second draw gives the same bytes (_redraw_if_same), on the device.
        memory.reserve(self.needs.get("draw", 0), "drawing the problem's inputs again", keep=(self,))
        with memory.measured_peak(self.needs, "draw"):
            return self.redraw()

    def recomputable(self) -> bool:
        return self.redraw is not None

    def tensors(self) -> list[torch.Tensor]:
        return [x for x in self.inputs or () if isinstance(x, torch.Tensor)] + list(self.snapshot.values())

    def kept(self) -> list[torch.Tensor]:
        return list(self.model.parameters())

    def _place(self, tensors: list[torch.Tensor]) -> None:
        it = iter(tensors)
        if self.inputs is not None:
            self.inputs = [next(it) if isinstance(x, torch.Tensor) else x for x in self.inputs]
        self.snapshot = {name: next(it) for name in self.snapshot}

    def _release(self) -> None:
        if self.redraw is None:
            return super()._release()
        self.inputs = None  # drawn again when next needed
        self.snapshot = dict(zip(self.snapshot, memory.moved(list(self.snapshot.values()), torch.device("cpu"))))

    def run_inputs(self) -> list:
        """The inputs for one run, the caller's own (a run may write into them). Inputs drawn under
        their seed are handed over and drawn again for the next run: a copy beside the kept ones
        put two sets of inputs on the device in every model run (a 1.6 GB pool at 2.2x
        torch.compile's peak in its baseline run, docs/memory.md). Others are copied."""
        self.touch()
        if self.redraw is not None:
            drawn = self.inputs if self.inputs is not None and not self.on_host else self._draw()
            self.inputs, self.on_host = None, False
            return drawn
        return [x.to(self.device, copy=True) if isinstance(x, torch.Tensor) else x for x in self.inputs]

    def values(self) -> list:
        """The inputs as they are (read, never written): drawn again if dropped, not kept."""
        self.touch()
        return self._draw() if self.inputs is None else self.inputs


def _redraw_if_same(state: BundleState, inputs: list, needs: dict | None = None):
    """The bundle's input redraw (bundle_runner.input_redrawer) when a second draw gives the same
    bytes as `inputs` (checked once, by fingerprint; a problem whose inputs are not reproducible is
    kept and spilled to the host as before); None for small inputs, which are never dropped.

    `inputs` (the caller's list) is emptied before the second draw and refilled with it: the two draws
    side by side, with the problem's own temporaries of drawing (a scaled and exponentiated fp16 input:
    two of its size), put three times a 3.9 GB input on the device, 3.0x torch.compile's peak. Any draw
    is as good as the first (the capture's own draw is not on the device either); a draw that is not
    reproducible is kept as the inputs, with no redraw."""
    if not memory.on_gpu() or memory.storage_bytes(inputs) < memory.SPILL_MIN_BYTES:
        return None
    redraw = input_redrawer(state.dir, state.device)
    if redraw is None:
        return None
    prints = [memory.fingerprint(x) for x in inputs if isinstance(x, torch.Tensor)]
    inputs.clear()  # the first draw's tensors go now: the caller's list held the only reference
    try:
        with memory.measured_peak(needs if needs is not None else {}, "draw"):  # what every later draw reserves
            again = redraw()
    except Exception:  # noqa: BLE001 - not redrawable here: drawn as the first time, kept and spilled as before
        inputs.extend(rebuild_problem(state.dir, state.device)[1])
        return None
    inputs.extend(again)
    return redraw if [memory.fingerprint(x) for x in again if isinstance(x, torch.Tensor)] == prints else None


def _built(state: BundleState, dtype: torch.dtype | None) -> _Problem:
    """The problem for `dtype`, built on first use and kept with the bundle."""
    cached = state.problems.get(dtype)
    if cached is None:
        redraw, needs = None, {}
        if dtype is None:
            model, inputs = rebuild_problem(state.dir, state.device)
            redraw = _redraw_if_same(state, inputs, needs)
        else:
            base = _built(state, None)
            base.touch()
            _restore_buffers(base.model, base.snapshot)  # the copy starts from the buffers as built
            try:
                model = copy.deepcopy(base.model).to(dtype)
            except Exception:  # noqa: BLE001 - a model that cannot be copied is built again
                model = rebuild_problem(state.dir, state.device)[0].to(dtype)
            inputs = [x.to(state.device, dtype) if isinstance(x, torch.Tensor) and x.is_floating_point()
                      else x.to(state.device) if isinstance(x, torch.Tensor) else x for x in base.values()]
        snapshot = {name: b.detach().clone() for name, b in model.named_buffers()}
        cached = state.problems[dtype] = _Problem(model, inputs, snapshot, state.device, redraw, needs)
    return cached


def problem_of(state: BundleState, dtype: torch.dtype | None = None,
               kind: str = "model") -> tuple[torch.nn.Module, list]:
    """(model, inputs) of the bundle's problem, rebuilt once per bundle (and dtype) and reused.

    Rebuilding means the problem's own weight and input construction on the CPU under fixed seeds
    (capture_common.build_problem), seconds for inputs of a GB, and G3, the end-to-end gate and the
    bench each ran the model three or four times. Every call gets fresh clones of the inputs and
    the model's buffers as they were built, so a model that writes to either cannot leak state
    from one run into the next. `dtype` (float64: G3's reference) converts a copy of the model."""
    # Room for the run's inputs and outputs first, for every caller (the baseline's runs, the eager
    # model, the profile's direct call): held state moves off the device before the run, not after.
    memory.reserve(run_need(state, kind, dtype), "a model run")
    problem = _built(state, dtype)
    # Copied to the device from wherever they are (a plan that moved them to the host keeps them
    # there: the run's own copy is the only one the device needs, and the caller made room for it).
    _restore_buffers(problem.model, problem.snapshot)
    return problem.model, problem.run_inputs()


def _restore_buffers(model: torch.nn.Module, snapshot: dict) -> None:
    with torch.no_grad():
        for name, b in model.named_buffers():
            if name in snapshot:
                b.copy_(snapshot[name])


# Bumped at every Dynamo reset made here: a kept compiled model is only reused within its epoch
# (a reset empties Dynamo's caches, and a model compiled for other modules must not be run instead).
_dynamo_epoch = [0]


def dynamo_reset() -> None:
    """Empties Dynamo's caches (a capture in this worker, a model compiled for other modules)."""
    torch._dynamo.reset()
    _dynamo_epoch[0] += 1


def model_runner(state: BundleState, modules: list | None = None):
    """A callable running the model on its rebuilt inputs with each graph replaced by `modules`
    (default: the baseline's); compiled once, so repeated calls time only the run."""
    model, inputs = problem_of(state)  # held state moves off the device first if need be
    if is_kernel_file(state.meta):
        # A kernel file's module takes the launcher's inputs directly; no Dynamo in between.
        module = (modules or state.modules)[0]

        def run_direct():
            with torch.no_grad():
                return module.call(call_args(state.dir, 0, model, inputs, state.meta))

        run_direct.model, run_direct.inputs = model, inputs
        return run_direct
    mods = list(modules or state.modules)
    key = tuple(id(m) for m in mods)
    cached = state.runner
    if cached is None or cached[0] != key or cached[1] != _dynamo_epoch[0]:
        # Dynamo traces again after a reset only: the baseline run, the eager check's recording run and
        # the baseline's second run reuse one trace (about 2 s each at these sizes), fresh inputs each.
        backend = BundleBackend(state.meta["graphs"], mods)
        dynamo_reset()
        cached = state.runner = (key, _dynamo_epoch[0], torch.compile(model, backend=backend, dynamic=False), mods)
    compiled = cached[2]

    def run():
        with torch.no_grad():
            return compiled(*inputs)

    run.model, run.inputs = model, inputs  # the bench's eager run reads the same copies (one set, not two)
    return run


def reference(state: BundleState, which: str):
    """The output of the baseline modules ("baseline"), the eager model ("eager") or the model in
    float64 ("fp64") on the problem's inputs, computed on first use and kept with the bundle:
    G3 and the end-to-end gate compare every candidate with the same three, and each used to
    cost a model run (and the baseline a Dynamo trace) per candidate. Large outputs are kept on
    the host (docs/memory.md): they are only ever compared, in slices."""
    if which == "eager" and which not in state.references:
        # Made again rather than copied to the host when it ran on the device (one eager run, no
        # trace: milliseconds on the GPU); kept where it is when it ran on the host (seconds), or when
        # its measured run showed the device cannot run it again under the soft target.
        if eager_on_device(state):
            held = state.references[which] = _kept(eager_model(state), lambda: eager_model(state))
            if not eager_on_device(state):  # its measured run passed the target: not run there again
                held.not_remade()
        else:
            state.references[which] = _kept(host_eager(state))
    elif which not in state.references:
        # The baseline's would need Dynamo to trace again whenever a candidate's modules ran last,
        # the float64 one may run on the host: those are spilled, not made again.
        run = {"baseline": lambda: run_model(state), "fp64": lambda: _fp64_reference(state)}[which]
        state.references[which] = _kept(run())
    held = state.references[which]
    if which == "baseline" and not held.intact():
        # Its host copy no longer holds what the run gave (docs/memory.md): made again, as at first.
        memory.note_copy_mismatch("the baseline's output kept on the host changed")
        del state.references[which], held
        held = state.references[which] = _kept(run_model(state))
    # Callers drop it before their next allocation: a spill of a reference someone still holds
    # would free nothing on the device.
    return held.get()


def _kept(out, remake=None) -> memory.HeldTree:
    """A reference as the worker keeps it: on the device while under the soft target, Spillable."""
    return memory.kept_tree(out, remake)


def baseline_self(state: BundleState, tols) -> dict:
    """The baseline against a second run of itself (what the model varies by with no kernel
    changed), per tolerance set; the second run's output is not kept."""
    key = json.dumps(sorted((str(k), v) for k, v in tols.items()))
    if key not in state.self_checks:
        again = run_model(state)
        state.self_checks[key] = cmp.compare_outputs(again, reference(state, "baseline"), tols)
    return state.self_checks[key]


def _fp64_reference(state: BundleState):
    """The model in float64 on upcast inputs. On the device when it fits; a model whose float64 copy
    does not fit runs on the host instead (the same inputs, moved), which only costs time. Nothing of
    it is kept but its output: a float64 copy of the model and its inputs can be twice the problem."""
    if is_kernel_file(state.meta):
        return eager_model(state, torch.float64)
    devices = [state.device, "cpu"] if state.device == "cuda" else [state.device]
    if state.device == "cuda":
        # Its inputs and outputs in float64 (4x a bf16 model's): held state moves to the host first,
        # and a reference that would still pass the soft target (docs/memory.md) runs on the host.
        need = _fp64_need(state)
        try:
            memory.reserve(need, "the float64 reference")
            on_device = memory.fits_now(need)
        except memory.WorkerOOM:
            on_device = False
        if not on_device:
            devices = ["cpu"]
    for dev in devices:
        failed = False
        try:
            return _float64_run(state, dev)
        except (torch.OutOfMemoryError, memory.WorkerOOM):
            if dev == devices[-1]:
                raise
            failed = True
        if failed:  # outside the except block: its traceback no longer holds the failed run's tensors
            memory.release_cache()


def fp64_host_need(state: BundleState) -> int | None:
    """What the float64 reference needs when it would run on the host (its need passes the soft
    target even with every held object moved off the device), else None: on the device, in CPU
    mode, for a kernel file, or already made. On the host it costs the CPUs' time: 15.6 s of a
    bf16 exclusive cumsum over 524288 x 3527's 19.4 s baseline stage (H100, session 38)."""
    if state.device != "cuda" or "fp64" in state.references or is_kernel_file(state.meta):
        return None
    need = _fp64_need(state)
    return None if memory.fits_after_spill(need) else need


def _fp64_need(state: BundleState) -> int:
    """What the float64 model run takes on the device: its inputs and outputs in float64, or the
    measured eager run scaled by the same factor when that is more (eager temporaries, a softmax's
    exponentials, grow with the dtype too). It runs once per bundle, so its own run is never measured
    before the reserve that decides where it runs."""
    up, own = run_bytes(state.meta, torch.float64), run_bytes(state.meta)
    eager = eager_need(state)
    return max(up, int(eager * up / own) if own else 0)


def _float64_run(state: BundleState, dev: str):
    base = _built(state, None)
    base.touch()
    _restore_buffers(base.model, base.snapshot)  # the copy starts from the buffers as built
    try:
        model = copy.deepcopy(base.model).to(dev, torch.float64)
    except (torch.OutOfMemoryError, memory.WorkerOOM):
        raise
    except Exception:  # noqa: BLE001 - a model that cannot be copied is built again
        model = rebuild_problem(state.dir, dev)[0].to(torch.float64)
    inputs = _float64_inputs(base, dev)
    with torch.no_grad(), float64_everywhere():
        return model(*inputs)


def _float64_inputs(base: _Problem, dev: str) -> list:
    """The problem's inputs on `dev`, floating ones upcast to float64. On the device an input and its
    float64 copy side by side are three times the input (an argmax over a 6 GB input: 18 GB, three
    times torch.compile's peak); when they would pass the soft target the inputs go to the host first
    and are upcast from there in slices, so the device holds the float64 copies alone."""
    xs = base.values()
    floating = [x for x in xs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    if dev != "cuda" or memory.fits_now(sum(x.numel() * 8 for x in floating)):
        return [x.to(dev, torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point()
                else x.to(dev) if isinstance(x, torch.Tensor) else x for x in xs]
    del floating
    if base.recomputable():  # spilling drops drawn inputs: the host needs its own copy first
        xs = memory.moved(xs, torch.device("cpu"))
        base.spill()
    else:
        del xs
        base.spill()
        xs = base.values()  # now on the host
    memory.release_cache()
    return [memory.upcast_in_slices(x, dev, torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point()
            else x.to(dev) if isinstance(x, torch.Tensor) else x for x in xs]


def run_model(state: BundleState, modules: list | None = None):
    """The model's output with each graph replaced by `modules` (default: the baseline's)."""
    with memory.measured_peak(state.run_needs, ("model", None)):
        return model_runner(state, modules)()


def eager_model(state: BundleState, dtype: torch.dtype | None = None):
    if is_kernel_file(state.meta) and dtype == torch.float64:
        model, inputs = problem_of(state)
        # The file's reference(*inputs) in float64; without one, the original launcher at its own
        # precision is the best reference there is (G3's fallback then cannot rescue a candidate).
        up = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        with torch.no_grad():
            ref = model.float64_forward(*up)
            return ref if ref is not None else model(*inputs)
    if dtype is None:
        state.eager_device = "device"
    with memory.measured_peak(state.run_needs, ("eager", dtype)):
        model, inputs = problem_of(state, dtype, "eager")
        with torch.no_grad(), float64_everywhere() if dtype == torch.float64 else contextlib.nullcontext():
            return model(*inputs)


def run_need(state: BundleState, kind: str = "model", dtype: torch.dtype | None = None) -> int:
    """What a model run of `kind` ("model": the compiled modules, "eager") takes on the device: its
    inputs and outputs, or more as measured (and, for the eager model, as capture measured it)."""
    if kind == "eager" and dtype is None:
        return eager_need(state)
    return max(run_bytes(state.meta, dtype), state.run_needs.get((kind, dtype), 0))


def eager_need(state: BundleState) -> int:
    """What one eager run takes on the device above what was in use: as last measured here, else
    capture's measure of the eager call (meta.json `eager_call_bytes`: its own allocations, above
    its inputs) plus the run's copy of the inputs; at least its inputs and outputs."""
    own = run_bytes(state.meta)
    measured = state.run_needs.get(("eager", None))
    if measured:
        return max(own, measured)
    call = state.meta.get("eager_call_bytes")
    if isinstance(call, int) and not isinstance(call, bool) and call >= 0:
        return max(own, run_bytes(state.meta, inputs_only=True) + call)
    return own


def eager_on_device(state: BundleState) -> bool:
    """Whether the eager model runs on the device: unless its run would pass the soft target even
    with every held object moved off (docs/memory.md). An eager norm of a half-precision input
    upcasts it whole, twice: 3.5x torch.compile's peak, which the plan can only avoid by running it
    elsewhere. Unknown needs (no capture measure, no run yet) count as its inputs and outputs."""
    return state.device != "cuda" or memory.fits_after_spill(eager_need(state))


def host_eager(state: BundleState):
    """The eager model's output, run on the host on host copies of the model and the inputs: only
    time is spent (seconds for GBs), and the device holds nothing of it. Its output stays there."""
    base = _built(state, None)
    base.touch()
    _restore_buffers(base.model, base.snapshot)  # the copy starts from the buffers as built
    try:
        model = copy.deepcopy(base.model).to("cpu")
    except Exception:  # noqa: BLE001 - a model that cannot be copied is built again
        model = rebuild_problem(state.dir, "cpu")[0]
    inputs = memory.moved(list(base.values()), torch.device("cpu"))
    state.eager_device = "host"
    with torch.no_grad():
        return model(*inputs)


def run_bytes(meta: dict, upcast: torch.dtype | None = None, inputs_only: bool = False) -> int:
    """Bytes of the model's inputs and outputs as meta.json records them (`upcast`: floating ones
    at that dtype's size, as the float64 reference holds them)."""
    import math

    def size(name: str) -> int:
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            return 1
        return (upcast if upcast is not None and dtype.is_floating_point else dtype).itemsize

    described = meta.get("inputs", []) + ([] if inputs_only else meta.get("outputs", []))
    return sum(math.prod(d["shape"]) * size(d.get("dtype", "")) for d in described if "shape" in d)


# Compiled candidates, least recently used first: the cascade runs one on many input sets. They hold
# no buffers (a launcher and its binary), so a count bounds them.
compiled_candidates: "OrderedDict[tuple, Any]" = OrderedDict()
_CANDIDATES_KEPT = 64


def candidate_launcher(state: BundleState, rec: LaunchRecord, source: str | None, config: dict | None):
    """The launcher to run: the module's own kernel object, or one built from `source`; `config` pins blocks."""
    original = getattr(state.modules[rec.graph], rec.kernel)
    name = state.kernel_name(rec.graph, rec.kernel)
    if source is None and config is None:
        return original
    text = source if source is not None else _kernel_source(state, rec)
    key = (state.device, name, text, json.dumps(config, sort_keys=True))
    if key not in compiled_candidates:
        while len(compiled_candidates) >= _CANDIDATES_KEPT:  # a search tries many candidates: the oldest go first
            compiled_candidates.popitem(last=False)
        compiled_candidates[key] = load_kernel(name, text, state.device, config)
    compiled_candidates.move_to_end(key)
    return compiled_candidates[key]


def _kernel_source(state: BundleState, rec: LaunchRecord) -> str:
    return kernel_decls(state.sources[rec.graph])[rec.kernel][1]


def stitched_modules(state: BundleState, req: dict) -> list:
    """The bundle's modules with replacements: `sources` (one full module text per graph; null or the
    baseline's own text keeps the baseline module) or `source` for graph `graph`."""
    if "sources" in req:
        sources = req["sources"]
        if len(sources) != len(state.modules):
            raise ValueError(f"sources: {len(sources)} module(s) given, the bundle has {len(state.modules)} graph(s); "
                             "pass one module text (or null) per graph")
    else:
        sources = [None] * len(state.modules)
        sources[req.get("graph", 0)] = req["source"]
    modules = list(state.modules)
    for g, src in enumerate(sources):
        if src is None or src == state.sources[g]:
            continue  # unchanged: the loaded baseline module (on the GPU, no recompile)
        path = state.dir / state.meta["graphs"][g]["module"]
        module = load_module(src, f"{path} (stitched)", state.device)
        module.__kernel_vars__ = kernel_vars(src)
        modules[g] = module
    return modules
