"""Worker operations on bundles (docs/protocol.md): load a bundle, run its
baseline module against the eager model, record every launch's real
arguments, compile a candidate for a recorded launch (G1's `compiles`), run one
kernel alone (its own source or a candidate's, with a given config, outputs
poisoned), run the model with re-stitched modules, and run it in float64.
Timing and profiles are in gpu_ops.py; what a worker keeps of a bundle between
requests is bundle_state.py.
"""

from __future__ import annotations

from typing import Any

import torch

from ..bundle_runner import is_kernel_file
from ..bundle_state import (BundleState, baseline_self, candidate_launcher, fp64_host_need, get_bundle, model_runner,
                            reference, run_bytes, run_model, stitched_modules)
from ..measure import compare as cmp
from ..measure import memory
from ..measure.launches import (LaunchRecord, chosen_config, draw_transient_bytes, kernel_decls, record_launches,
                                snapshot)
from ..measure.poison import FILLS, poison_args
from ..protocol import is_fatal, op, root_cause
from ..runtime.compile_check import compile_for_launch


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
    memory.reserve(run_bytes(state.meta), "the baseline run")
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
            "eager_device": state.eager_device,
            "memory": {"measured": compiled_peak is not None, "compiled_peak_bytes": compiled_peak},
            "seconds": {k: round(v, 3) for k, v in seconds.items()}}


def _recorded(state: BundleState) -> list[LaunchRecord]:
    """Every launch of one run of the baseline modules, recorded. Read-only arguments in the run's
    own input copies are kept without a copy (record_launches); a run whose later launch wrote one
    of them after all is recorded again with copies."""
    known: dict = {}

    def read_only(g: int, var: str) -> set[int]:
        if (g, var) not in known:
            known[g, var] = read_only_args(state, g, var)
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
    # Back on the device first: with many launches recorded, earlier records were spilled to the host
    # while later ones were made, and a launch on host tensors fails (stream None: every model of
    # the suite's level 3 but three, on the H100, session 30).
    rec.use("checking a launch's original alone")
    runs = _KernelRuns(state, rec, None, None, (), "nan")
    want = runs.run(getattr(state.modules[rec.graph], rec.kernel))
    rec.isolated = cmp.compare_args(want, rec.after_args(), cmp.tolerances(None))
    rec.after = []


def read_only_args(state: BundleState, graph: int, var: str) -> set[int]:
    """Positions of a kernel's arguments Inductor names `in_ptr*`: it only reads them (as G2's lean
    path relies on); none for a kernel file, whose names are its author's."""
    return set() if is_kernel_file(state.meta) else _in_ptr_args(state, graph, var)


def _in_ptr_args(state: BundleState, graph: int, var: str) -> set[int]:
    """Positions of the runtime parameters of module variable `var`'s kernel named `in_ptr*`."""
    names = _runtime_params(kernel_decls(state.sources[graph])[var][1], state.kernel_name(graph, var))
    return {i for i, n in enumerate(names) if n.startswith("in_ptr")}


def _measured_run(state: BundleState) -> int | None:
    """Runs the baseline modules once, keeps the output as the "baseline" reference and returns
    torch.compile's peak for that call: the model's weights and inputs plus what the call itself
    allocated at most (CUDA only; None in CPU mode)."""
    run = model_runner(state)
    if state.device != "cuda":
        state.references["baseline"] = memory.kept_tree(run())
        return None
    problem = state.problems[None]
    resident = memory.storage_bytes(list(problem.model.parameters()) + list(problem.model.buffers())
                                    + [x for x in run.inputs if isinstance(x, torch.Tensor)])
    # The call's own peak above what was in use before it (the job's and the request's peaks keep
    # what came before: measured_peak carries them over the allocator's reset).
    taken: dict = {}
    torch.cuda.synchronize()
    with memory.measured_peak(taken, "call"):
        out = run()
        torch.cuda.synchronize()
    state.references["baseline"] = memory.kept_tree(out)
    peak = resident + max(0, taken["call"])
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
        read_only = read_only_args(state, rec.graph, rec.kernel)  # none for a kernel file: its author names them
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
        # The comparison's slices come on top (compare.slice_elements: up to a sixteenth of the soft
        # target): left out, a seed's run of a 5.6 GB max pool passed its goal by that much.
        need += cmp.compare_allowance()
        memory.reserve(need, stage, keep=keep)
        memory.note_accounted(need + (0 if inputs is None else whole))
        self.shared = memory.fingerprints(self.base, [i for i in tensors if i not in self.copied])

    def run(self, launcher, last: bool = False) -> list[Any]:
        """One launch on copies of the inputs (`last` on the lean path with a seed's inputs: on the
        inputs themselves, which no later run needs)."""
        copied = set() if last and self.in_place else self.copied
        args = [snapshot(a) if i in copied else a for i, a in enumerate(self.base)]
        poison_args(args, self.poisoned, self.fill, -1 if self.seed is None else self.seed)
        # From the inputs, not the record: a seed's run may have moved the record to the host.
        cuda = any(isinstance(a, torch.Tensor) and a.is_cuda for a in self.base)
        if not cuda and self.rec.device is not None and self.rec.device.type == "cuda":
            # A launch on host copies fails inside Triton's launcher with "argument 9 must be int, not
            # None" (its stream): named here instead, with where to look.
            raise RuntimeError(f"{self.rec.kernel}: its launch arguments are on the host, the kernel on "
                               f"{self.rec.device}: the record was not brought back (LaunchRecord.use) before "
                               "its launch")
        stream = torch.cuda.current_stream().cuda_stream if cuda else None
        launcher.run(*args, stream=stream, **self.rec.kwargs)
        if cuda:
            torch.cuda.synchronize()
        return args

    def changed_inputs(self) -> list[int]:
        """Shared read-only arguments whose bytes a run changed."""
        return memory.changed_since(self.base, self.shared)


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
        # Synthesis reads the record only for its statistics, taken once and first: then the record may
        # go to the host like anything else held while the seed's inputs are drawn (kept beside them, the
        # record and a seed's inputs set the job's peak: a 244 MB max pool at 2.55x torch.compile's).
        rec.take_stats()
        memory.reserve(memory.storage_bytes(rec.args) + draw_transient_bytes(rec.args), f"G2 (inputs for seed {seed})")
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
        root = root_cause(exc)
        if is_fatal(exc) or is_fatal(root):
            raise  # a broken CUDA context: the reply says fatal and the supervisor replaces this process
        return {"compiled": False, "error": f"{type(root).__name__}: {root}"[:4000]}
    return {"compiled": True, "how": how}


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
    the baseline modules' output; reports the baseline's error relative to float64. With
    `defer_host`, a reference that would run on the host is not made: `deferred` says why."""
    state = get_bundle(req)
    if req.get("defer_host") and (need := fp64_host_need(state)) is not None:
        # The baseline stage asks only for the report: a reference that would run on the host waits
        # for a candidate that needs it (G3 outside the baseline's tolerance), which may never come.
        return {"deferred": f"the float64 model needs {memory.gib(need)} on the device, above what the memory "
                            f"plan's soft target leaves ({memory.gib(memory.target())}): it would run on the host's "
                            f"CPUs, so it runs only if a candidate needs it (G3 outside the baseline's tolerance)",
                "need_bytes": need}
    reference(state, "fp64")  # the run first, the references read after it
    ref = reference(state, "fp64")
    baseline = reference(state, "baseline")
    return {"baseline_vs_fp64": cmp.compare_outputs(baseline, ref, promote=True)}
