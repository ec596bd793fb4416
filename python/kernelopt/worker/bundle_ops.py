"""Worker operations on bundles (docs/protocol.md): load a bundle, run its
baseline module against the eager model, record every launch's real
arguments, compile a candidate for a recorded launch (G1's `compiles`), run one
kernel alone (its own source or a candidate's, with a given config, outputs
poisoned), run the model with re-stitched modules, and run it in float64.
Timing and profiles are in gpu_ops.py.

A loaded bundle stays in the worker (keyed by its directory) so the launch
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

from . import compare as cmp
from . import memory
from .bundle_runner import (BundleError, BundleBackend, call_args, input_redrawer, is_kernel_file, read_meta,
                            rebuild_problem)
from .compile_check import compile_for_launch
from .cpu_runtime import load_module
from .float64_mode import float64_everywhere
from .launches import LaunchRecord, chosen_config, kernel_decls, kernel_vars, record_launches, snapshot
from .ops import device
from .poison import FILLS, poison, poison_args  # noqa: F401 (poison: re-exported)
from .protocol import op


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


def _check_versions(meta: dict, dev: str) -> None:
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
        _check_versions(meta, dev)
        sources, modules = _load_modules(bundle, meta, dev)
        state = loaded_bundles[key] = BundleState(bundle, meta, dev, sources, modules)
    return state


class _Problem(memory.Spillable):
    """The rebuilt model, its inputs and its buffers as built. The inputs and the buffer snapshot
    may move to the host between model runs (every run gets fresh device copies of them anyway);
    the model's own weights stay on the device and are counted as held. Inputs drawn on the device
    under their seed (`redraw`) are dropped instead and drawn again when next needed: a draw of
    several GB takes a tenth of a second on the GPU, a copy to the host and back seconds."""

    def __init__(self, model: torch.nn.Module, inputs: list, snapshot: dict, device: str, redraw=None):
        self.model, self.inputs, self.snapshot = model, inputs, snapshot
        self.device = torch.device(device)
        self.redraw = redraw
        super().__init__()

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

    def run_inputs(self, run_bytes: int = 0) -> list:
        """The inputs for one run, the caller's own (a run may write into them): copies of the kept
        ones, or a fresh draw of dropped ones — kept again when the device has room for a copy and
        the run (`run_bytes`: its inputs and outputs) under the soft target."""
        self.touch()
        if self.inputs is None:
            drawn = self.redraw()
            if not memory.fits_now(max(run_bytes, memory.storage_bytes(drawn))):
                return drawn
            self.inputs, self.on_host = drawn, False
        return [x.to(self.device, copy=True) if isinstance(x, torch.Tensor) else x for x in self.inputs]

    def values(self) -> list:
        """The inputs as they are (read, never written): drawn again if dropped, not kept."""
        self.touch()
        return self.redraw() if self.inputs is None else self.inputs


def _redraw_if_same(state: BundleState, inputs: list):
    """The bundle's input redraw (bundle_runner.input_redrawer) when a second draw gives the same
    bytes as `inputs` (checked once, by fingerprint; a problem whose inputs are not reproducible is
    kept and spilled to the host as before); None for small inputs, which are never dropped."""
    if not memory.on_gpu() or memory.storage_bytes(inputs) < memory.SPILL_MIN_BYTES:
        return None
    redraw = input_redrawer(state.dir, state.device)
    if redraw is None:
        return None
    prints = [memory.fingerprint(x) for x in inputs if isinstance(x, torch.Tensor)]
    try:
        again = [memory.fingerprint(x) for x in redraw() if isinstance(x, torch.Tensor)]
    except Exception:  # noqa: BLE001 - not redrawable here: kept and spilled as before
        return None
    return redraw if again == prints else None


def _built(state: BundleState, dtype: torch.dtype | None) -> _Problem:
    """The problem for `dtype`, built on first use and kept with the bundle."""
    cached = state.problems.get(dtype)
    if cached is None:
        redraw = None
        if dtype is None:
            model, inputs = rebuild_problem(state.dir, state.device)
            redraw = _redraw_if_same(state, inputs)
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
        cached = state.problems[dtype] = _Problem(model, inputs, snapshot, state.device, redraw)
    return cached


def problem_of(state: BundleState, dtype: torch.dtype | None = None) -> tuple[torch.nn.Module, list]:
    """(model, inputs) of the bundle's problem, rebuilt once per bundle (and dtype) and reused.

    Rebuilding means the problem's own weight and input construction on the CPU under fixed seeds
    (capture_common.build_problem), seconds for inputs of a GB, and G3, the end-to-end gate and the
    bench each ran the model three or four times. Every call gets fresh clones of the inputs and
    the model's buffers as they were built, so a model that writes to either cannot leak state
    from one run into the next. `dtype` (float64: G3's reference) converts a copy of the model."""
    # Room for the run's inputs and outputs first, for every caller (the baseline's runs, the eager
    # model, the profile's direct call): held state moves off the device before the run, not after.
    need = _run_bytes(state.meta, dtype)
    memory.reserve(need, "a model run")
    problem = _built(state, dtype)
    # Copied to the device from wherever they are (a plan that moved them to the host keeps them
    # there: the run's own copy is the only one the device needs, and the caller made room for it).
    _restore_buffers(problem.model, problem.snapshot)
    return problem.model, problem.run_inputs(need)


def _restore_buffers(model: torch.nn.Module, snapshot: dict) -> None:
    with torch.no_grad():
        for name, b in model.named_buffers():
            if name in snapshot:
                b.copy_(snapshot[name])


# Bumped at every Dynamo reset made here: a kept compiled model is only reused within its epoch
# (a reset empties Dynamo's caches, and a model compiled for other modules must not be run instead).
_dynamo_epoch = [0]


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
        torch._dynamo.reset()
        _dynamo_epoch[0] += 1
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
    if which not in state.references:
        run = {"baseline": lambda: run_model(state), "eager": lambda: eager_model(state),
               "fp64": lambda: _fp64_reference(state)}[which]
        # The eager model's output is made again rather than copied to the host (one eager run, no
        # trace: milliseconds on the GPU). The baseline's would need Dynamo to trace again whenever
        # a candidate's modules ran last, the float64 one may run on the host: those are spilled.
        state.references[which] = _kept(run(), run if which == "eager" else None)
    # Callers drop it before their next allocation: a spill of a reference someone still holds
    # would free nothing on the device.
    return state.references[which].get()


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
        need = _run_bytes(state.meta, torch.float64)
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
    model, inputs = problem_of(state, dtype)
    with torch.no_grad(), float64_everywhere() if dtype == torch.float64 else contextlib.nullcontext():
        return model(*inputs)


@op("load_bundle")
def load_bundle(req: dict) -> dict:
    state = get_bundle(req)
    return {"graphs": [{"module": g["module"], "kernels": sorted(m.__kernel_vars__.values())}
                       for g, m in zip(state.meta["graphs"], state.modules)],
            "device": state.device}


@op("run_baseline")
def run_baseline(req: dict) -> dict:
    """The bundle's modules against the eager model on the problem's real inputs; records launches."""
    import time

    t0 = time.perf_counter()
    state = get_bundle(req)
    seconds = {"load": time.perf_counter() - t0}

    def lap(name: str) -> None:  # where the baseline's time goes (the reply's `seconds`)
        seconds[name] = time.perf_counter() - t0 - sum(seconds.values())

    # Two model runs' inputs and outputs at once (the run and the eager reference's), as meta.json
    # describes them: a model that cannot have even those fails here, before anything runs.
    memory.reserve(_run_bytes(state.meta), "the baseline run")
    compiled_peak = None
    if "baseline" not in state.references:
        # The plain run first, alone: torch.compile's own peak for one call of the model is
        # measured on it (the yardstick of the job's peak, docs/memory.md) and its output is the
        # baseline every candidate is compared with.
        compiled_peak = _measured_run(state)
    lap("baseline_run")
    # The eager model against the baseline's output, before recording: its run and the records are
    # never alive together, and the eager output can be dropped (it is made again) while recording.
    eager = reference(state, "eager")
    lap("eager_run")
    report = cmp.compare_outputs(reference(state, "baseline"), eager)
    del eager
    lap("compare")
    state.launches = []
    state.launches = _recorded(state)
    lap("recorded_run")
    return {"match": report["ok"], "comparison": report, "launches": len(state.launches),
            "memory": {"measured": compiled_peak is not None, "compiled_peak_bytes": compiled_peak},
            "seconds": {k: round(v, 3) for k, v in seconds.items()}}


def _recorded(state: BundleState) -> list[LaunchRecord]:
    """Every launch of one run of the baseline modules, recorded. Read-only arguments in the run's
    own input copies are kept without a copy (record_launches); a run whose later launch wrote one
    of them after all is recorded again with copies."""
    known: dict = {}

    def read_only(g: int, var: str) -> set[int]:
        if (g, var) not in known:
            known[g, var] = _read_only_args(state, g, var)
        return known[g, var]

    for share in (True, False):
        sink: list[LaunchRecord] = []
        run = model_runner(state)
        recorder = record_launches(state.modules, sink, run.inputs if share else (), read_only)
        with recorder:
            out = run()
        del out, run
        if recorder.intact():
            break
    # A live "after" holds a whole output's bytes until its kernel's first G2 request; the check it is
    # kept for (the original alone reproduces it) runs now instead, and the bytes go.
    for rec in recorder.live:
        try:
            _check_isolated(state, rec)
        except memory.WorkerOOM:
            pass  # no room for it now: the record keeps its "after", checked at its first G2 request
    return sink


def _check_isolated(state: BundleState, rec: LaunchRecord) -> None:
    """The original kernel alone on copies of the recorded arguments against what it left inside the
    module (`isolated_vs_module` of run_kernel's recorded runs); the record's "after" is dropped."""
    runs = _KernelRuns(state, rec, None, None, (), "nan")
    want = runs.run(getattr(state.modules[rec.graph], rec.kernel))
    rec.isolated = cmp.compare_args(want, rec.after_args(), cmp.tolerances(None))
    rec.after = []


def _read_only_args(state: BundleState, graph: int, var: str) -> set[int]:
    """Positions of a kernel's arguments Inductor names `in_ptr*`: it only reads them (as G2's lean
    path relies on); none for a kernel file, whose names are its author's."""
    return set() if is_kernel_file(state.meta) else _in_ptr_args(state, graph, var)


def _in_ptr_args(state: BundleState, graph: int, var: str) -> set[int]:
    """Positions of the runtime parameters of module variable `var`'s kernel named `in_ptr*`."""
    names = _runtime_params(kernel_decls(state.sources[graph])[var][1], state.kernel_name(graph, var))
    return {i for i, n in enumerate(names) if n.startswith("in_ptr")}


def _run_bytes(meta: dict, upcast: torch.dtype | None = None) -> int:
    """Bytes of the model's inputs and outputs as meta.json records them (`upcast`: floating ones
    at that dtype's size, as the float64 reference holds them)."""
    import math

    def size(name: str) -> int:
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            return 1
        return (upcast if upcast is not None and dtype.is_floating_point else dtype).itemsize

    return sum(math.prod(d["shape"]) * size(d.get("dtype", ""))
               for d in meta.get("inputs", []) + meta.get("outputs", []) if "shape" in d)


def _measured_run(state: BundleState) -> int | None:
    """Runs the baseline modules once, keeps the output as the "baseline" reference and returns
    torch.compile's peak for that call: the model's weights and inputs plus what the call itself
    allocated at most (CUDA only; None in CPU mode)."""
    run = model_runner(state)
    if state.device != "cuda":
        state.references["baseline"] = _kept(run())
        return None
    problem = state.problems[None]
    resident = memory.storage_bytes(list(problem.model.parameters()) + list(problem.model.buffers())
                                    + [x for x in run.inputs if isinstance(x, torch.Tensor)])
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    peak_so_far = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = run()
    torch.cuda.synchronize()
    call_peak = torch.cuda.max_memory_allocated() - before
    # The job's own peak (memory op) must not lose what came before this call.
    memory.carry_peak(peak_so_far)
    state.references["baseline"] = _kept(out)
    peak = resident + max(0, call_peak)
    memory.set_compiled_peak(peak)
    return peak


@op("record_launches")
def list_launches(req: dict) -> dict:
    state = get_bundle(req)
    if not state.launches:
        run_baseline(req)
    out = []
    for r in state.launches:
        rec = dict(r.describe(), name=state.kernel_name(r.graph, r.kernel))
        config = chosen_config(getattr(state.modules[r.graph], r.kernel))
        if config is not None:
            rec["config"] = config
        out.append(rec)
    return {"launches": out}


# Compiled candidates, least recently used first: the cascade runs one on many input sets. They hold
# no buffers (a launcher and its binary), so a count bounds them.
compiled_candidates: "OrderedDict[tuple, Any]" = OrderedDict()
_CANDIDATES_KEPT = 64


def candidate_launcher(state: BundleState, rec: LaunchRecord, source: str | None, config: dict | None):
    """The launcher to run: the module's own kernel object, or one built from `source`; `config` pins blocks."""
    from .cpu_runtime import load_kernel

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


class _KernelRuns:
    """Runs of one launch for G2 on one input set (the record's or a seed's), original and candidate
    alike. The whole-copy path gives each run its own copy of every argument. When two such copies do
    not fit the memory plan, the lean path copies only what a run may write — pure outputs, in-place
    buffers, every pointer Inductor does not name `in_ptr*` — and shares the read-only inputs, whose
    fingerprints (memory.fingerprint) are checked after every run. Both paths compare the same
    values, so their verdicts are the same (docs/memory.md)."""

    def __init__(self, state: BundleState, rec: LaunchRecord, inputs: list | None, seed: int | None,
                 poisoned: tuple, fill: str, stored=(), repeat: bool = False):
        self.rec, self.seed, self.poisoned, self.fill = rec, seed, poisoned, fill
        self.base = rec.args if inputs is None else inputs
        tensors = [i for i, a in enumerate(self.base) if isinstance(a, torch.Tensor)]
        read_only = _in_ptr_args(state, rec.graph, rec.kernel)
        written = {i for i in tensors if i not in read_only}
        written |= set(poisoned) | set(stored)
        whole = memory.storage_bytes(self.base)
        stage = f"G2 ({'recorded inputs' if seed is None else f'seed {seed}'})"
        keep = (rec,) if inputs is None else ()  # the record is the input set: never spilled under it
        # Whole copies when they fit as things are; else the lean path (no slower, fewer bytes); whole
        # copies after spilling held state only when nothing can be shared.
        self.lean = len(written) < len(tensors) and not memory.fits_now(2 * whole)
        self.copied = written if self.lean else set(tensors)
        # A seed's inputs are this request's own: the lean path's last run may write into them (with a
        # repeat the candidate runs twice, and the second run needs the inputs as they were).
        self.in_place = self.lean and inputs is not None and not repeat
        need = (1 if self.in_place else 2) * memory.storage_bytes(self.base[i] for i in self.copied)
        memory.reserve(need, stage, keep=keep)
        memory.note_accounted(need + (0 if inputs is None else whole))
        self.shared = {i: memory.fingerprint(self.base[i]) for i in tensors if i not in self.copied}

    def run(self, launcher, last: bool = False) -> list[Any]:
        """One launch on copies of the inputs (`last` on the lean path with a seed's inputs: on the
        inputs themselves, which no later run needs)."""
        copied = set() if last and self.in_place else self.copied
        args = [snapshot(a) if i in copied else a for i, a in enumerate(self.base)]
        poison_args(args, self.poisoned, self.fill, -1 if self.seed is None else self.seed)
        # From the inputs, not the record: a seed's run may have moved the record to the host.
        cuda = any(isinstance(a, torch.Tensor) and a.is_cuda for a in self.base)
        stream = torch.cuda.current_stream().cuda_stream if cuda else None
        launcher.run(*args, stream=stream, **self.rec.kwargs)
        if cuda:
            torch.cuda.synchronize()
        return args

    def changed_inputs(self) -> list[int]:
        """Shared read-only arguments whose bytes a run changed."""
        return [i for i, fp in self.shared.items() if memory.fingerprint(self.base[i]) != fp]


def _runtime_params(source: str, name: str) -> list[str]:
    """The names of a Triton kernel's runtime parameters (its constexprs left out), in order."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    # The entry is the kernel's own function: Inductor writes helpers (a scan's combine) before it.
    entries = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not entries:
        return []
    params = entries[0].args.posonlyargs + entries[0].args.args
    return [p.arg for p in params if not (p.annotation is not None and "constexpr" in ast.unparse(p.annotation))]


@op("run_kernel")
def run_kernel(req: dict) -> dict:
    """One kernel alone on the real arguments of one of its launches; compares every tensor argument
    after the run with the original kernel's run on the same inputs."""
    state = get_bundle(req)
    if not state.launches:
        run_baseline(req)
    rec = state.launch(req.get("graph", 0), req["kernel"], req.get("launch", 0))
    original = getattr(state.modules[rec.graph], rec.kernel)
    seed = req.get("seed")  # None: the real recorded arguments; an int: fresh random ones
    if seed is None or not rec.has_stats():
        # A seed's inputs need only the record's layout and statistics (kept after the first seed):
        # a record the plan moved to the host stays there through the seeds.
        rec.use("G2 (the launch's recorded arguments)")
    poisoned = tuple(req.get("poison", ()))  # argument indices that are pure outputs
    fill = req.get("poison_fill", "nan")  # "garbage" catches a candidate that skips "already written" outputs
    if fill not in FILLS:
        raise ValueError(f"poison_fill {fill!r}; use one of {FILLS}")
    tols = cmp.tolerances(req.get("tolerances"))
    # One synthesis per request, copied for each run (the original and the candidate see the same values).
    if seed is not None:
        # The record stays only while synthesis still reads it (its statistics, taken once): after that
        # it may go to the host like anything else held (the record, a seed's inputs and the runs'
        # copies together passed three times torch.compile's peak).
        memory.reserve(memory.storage_bytes(rec.args), f"G2 (inputs for seed {seed})",
                       keep=() if rec.has_stats() else (rec,))
    kind = req.get("inputs", "matched")  # how a seed's values are drawn (launches.INPUT_KINDS, docs/gates.md)
    if seed is None and kind != "matched":
        raise ValueError(f"inputs {kind!r} without a seed: the recorded arguments are drawn by the model; give a seed")
    inputs = None if seed is None else rec.synthesized_args(seed, kind, state.kernel_name(rec.graph, rec.kernel))
    runs = _KernelRuns(state, rec, inputs, seed, poisoned, fill, req.get("stored", ()), bool(req.get("repeat")))
    want = runs.run(original)
    if runs.changed_inputs():
        state.launches = []  # the record may be what changed: the next request records again
        raise RuntimeError(f"the original kernel wrote argument(s) {runs.changed_inputs()}, which its parameter "
                           "names say it only reads; G2 cannot share them (this is a bug: please report it)")
    candidate = candidate_launcher(state, rec, req.get("source"), req.get("config"))
    got = runs.run(candidate, last=not req.get("repeat"))
    # Scratch arguments (a split scan's workspace, allocated for this launch and freed after it):
    # what a kernel leaves there is dead, so they are not compared.
    scratch = set(req.get("scratch", ()))
    report = cmp.compare_args(got, want, tols, skip=scratch)
    if bad := runs.changed_inputs():
        # As a whole-copy run would find: the candidate's copy of an input differs from the original's.
        for entry in report["args"]:
            if entry["arg"] in bad:
                entry.update(ok=False, reason="the candidate wrote to an argument the original only reads")
        report.update(ok=False, rounding_only=False)
        if seed is None:
            state.launches = []  # the shared record itself was written: record again
    label = "recorded" if seed is None else f"seed {seed}" + ("" if kind == "matched" else f" ({kind})")
    out = {"match": report["ok"], "comparison": report, "inputs": label,
           "poison_fill": fill, "path": "lean" if runs.lean else "whole"}
    if seed is None and not bad:
        if rec.isolated is None and rec.after:
            # The original run alone reproduces what the kernel left in its arguments inside the module.
            # Checked once per record (the original on the recorded inputs gives the same every time);
            # what the launch left was kept for this check only, and GB-sized, so it goes after it.
            rec.isolated = cmp.compare_args(want, rec.after_args(), tols)
            rec.after = []
        if rec.isolated is not None:
            out["isolated_vs_module"] = rec.isolated
    del want  # before the repeat: at most two runs' copies are alive at once
    if req.get("repeat") and not bad:
        # The candidate again on the same inputs: anything beyond rounding is nondeterminism.
        again = cmp.compare_args(runs.run(candidate), got, tols, skip=scratch)
        out["deterministic"] = again["ok"]
        out["repeat_comparison"] = again
        out["match"] = out["match"] and again["ok"]
        rounding = (report["ok"] or report["rounding_only"]) and (again["ok"] or again["rounding_only"])
    else:
        rounding = report["rounding_only"]
    # Not a match, but only at rounding level (and so is any run-to-run difference): G2 may pass it
    # on condition of G3's float64 comparison (docs/gates.md).
    out["rounding_only"] = not out["match"] and rounding
    return out


@op("compile_kernel")
def compile_kernel(req: dict) -> dict:
    """G1's `compiles`: builds the candidate (`source` and/or `config`) and forces its compile for the
    recorded launch (compile_check.py). A compiler error is a record: `compiled: false` and the error."""
    state = get_bundle(req)
    if not state.launches:
        run_baseline(req)
    rec = state.launch(req.get("graph", 0), req["kernel"], req.get("launch", 0))
    rec.use("compiling a candidate")
    try:
        launcher = candidate_launcher(state, rec, req.get("source"), req.get("config"))
        how = compile_for_launch(launcher, rec, state.device)
    except Exception as exc:  # the candidate's failure, reported as data; the worker stays usable
        from .protocol import is_fatal, root_cause

        root = root_cause(exc)
        if is_fatal(exc) or is_fatal(root):
            raise  # a broken CUDA context: the reply says fatal and the supervisor replaces this process
        return {"compiled": False, "error": f"{type(root).__name__}: {root}"[:4000]}
    return {"compiled": True, "how": how}


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


@op("run_module")
def run_module(req: dict) -> dict:
    """The model with re-stitched modules (`sources`, or `source` for graph `graph`), against the
    baseline modules' output and the eager model's."""
    state = get_bundle(req)
    tols = cmp.tolerances(req.get("tolerances"))
    # The runs first (the float64 model, the candidate, the baseline again), then one reference at a
    # time, each dropped before the next is read: reading one may run a model (the eager output is
    # made again when it was dropped), and a spill frees the device only if no one here still holds
    # the tensor. The float64 model goes before the candidate: its inputs and outputs are the
    # request's largest working set, and the candidate's output (held here, not Spillable) beside it
    # put a max pool at 2.6 times torch.compile's peak.
    if req.get("fp64"):
        reference(state, "fp64")
    got = run_model(state, stitched_modules(state, req))
    # The baseline against itself run again: what the model varies by with no kernel changed
    # (a candidate's difference from the baseline is read against it).
    self_check = baseline_self(state, tols)
    out = {"vs_eager": cmp.compare_outputs(got, reference(state, "eager"), tols)}
    out["vs_baseline"] = cmp.compare_outputs(got, reference(state, "baseline"), tols)
    out["baseline_self"] = self_check
    if req.get("fp64"):
        # G3's fallback: both against the model in float64, so the cascade can ask whether the
        # candidate is at least as accurate as the baseline.
        # Compared in slices, each upcast on its own (compare.py): no whole float64 copy of an output.
        ref = reference(state, "fp64")
        out["candidate_vs_fp64"] = cmp.compare_outputs(got, ref, tols, promote=True)
        out["baseline_vs_fp64"] = cmp.compare_outputs(reference(state, "baseline"), ref, tols, promote=True)
    return out


@op("run_fp64")
def run_fp64(req: dict) -> dict:
    """The problem's model in float64 on upcast inputs (the reference G3 falls back to), against
    the baseline modules' output; reports the baseline's error relative to float64."""
    state = get_bundle(req)
    reference(state, "fp64")  # the run first, the references read after it
    ref = reference(state, "fp64")
    baseline = reference(state, "baseline")
    return {"baseline_vs_fp64": cmp.compare_outputs(baseline, ref, promote=True)}
