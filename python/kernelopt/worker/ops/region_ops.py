"""Worker operation `run_region` (docs/protocol.md): G2 for a fused region. The region's host
statements run twice on the same inputs — the baseline module's (several launches, the internal
buffers between them) and the candidate module's (one fused launch) — and every region output is
compared.

The engine sends each side's statements as written in its module's call() (allocations, views,
stream lookups and launches, verbatim, one per entry; G1 has already held the candidate's host code
to the original's plus the allowed edits), and where each name the region reads before writing
comes from: an argument of a recorded launch (`bindings`). Recorded inputs are the real ones;
with `seed` they are drawn afresh from each record as run_kernel draws a kernel's. Every buffer a
statement allocates is poisoned (`poison_fill`), so an output element the fused kernel never writes
cannot pass; with `repeat` the candidate runs twice (nondeterminism beyond rounding fails).
"""

from __future__ import annotations

from typing import Any

import torch

from ..bundle_state import BundleState, get_bundle, stitched_modules
from ..measure import compare as cmp
from ..measure import memory
from ..measure.launches import draw_transient_bytes, snapshot
from ..measure.poison import FILLS, poison
from ..protocol import op
from .bundle_ops import run_baseline

# The allocators Inductor's call() uses: each allocation a region statement makes is poisoned.
_ALLOCATORS = ("empty_strided_cuda", "empty_strided_cpu", "empty_strided", "empty_strided_xpu")


def _bound_records(state: BundleState, req: dict) -> tuple:
    """The launch records whose arguments the request's inputs are (the recorded inputs; a seed's
    draws are the request's own tensors): held on the device for the whole request. Spilled under
    it, a record's device tensors stay alive in the inputs, so the spill frees nothing and only
    copies: 09's region G2 passed its target by 170 MiB so (benchmarks/RESULTS.md, session 30)."""
    if req.get("seed") is not None:
        return ()
    graph = req.get("graph", 0)
    recs = {}
    for b in req["bindings"]:
        rec = state.launch(graph, b["kernel"], b["launch"])
        recs[id(rec)] = rec
    return tuple(recs.values())


def _inputs(state: BundleState, req: dict) -> dict[str, Any]:
    """Each bound name's tensor: the recorded argument, or a seed's draw from that record."""
    seed, kind = req.get("seed"), req.get("inputs", "matched")
    graph = req.get("graph", 0)
    records = _bound_records(state, req)
    # The recorded arguments are the inputs, or, for a seed, each record's statistics only (taken once, from the
    # record on the device, and first: then no record need stay beside the draws).
    back = records if seed is None else tuple(rec for rec in records if not rec.has_stats())
    stage = "recorded arguments" if seed is None else "statistics"
    for rec in back:  # all back first: one brought back must not send another away
        rec.use(f"G2 of a region (the launches' {stage})", keep=back)
    if seed is not None:
        for rec in back:
            rec.take_stats()
        drawn_bytes = sum(memory.storage_bytes(rec.args) for rec in records)
        transient = max((draw_transient_bytes(rec.args) for rec in records), default=0)
        memory.reserve(drawn_bytes + transient, f"G2 of a region (inputs for seed {seed})")
    drawn: dict = {}
    out = {}
    for b in req["bindings"]:
        rec = state.launch(graph, b["kernel"], b["launch"])
        if seed is None:
            out[b["name"]] = rec.args[b["arg"]]
            continue
        if id(rec) not in drawn:
            drawn[id(rec)] = rec.synthesized_args(seed, kind, state.kernel_name(graph, rec.kernel))
        out[b["name"]] = drawn[id(rec)][b["arg"]]
    return out


def _run(module, statements: list[str], inputs: dict, outputs: list[str], fill: str) -> list:
    """The statements in a scope holding copies of the inputs, each allocation poisoned; the outputs."""
    scope = {name: snapshot(t) if isinstance(t, torch.Tensor) else t for name, t in inputs.items()}
    for name in _ALLOCATORS:
        real = module.__dict__.get(name)
        if real is not None:
            def poisoned(*args, _real=real, **kwargs):
                t = _real(*args, **kwargs)
                poison(t, fill)
                return t
            scope[name] = poisoned
    for s in statements:
        exec(compile(s, "<region>", "exec"), module.__dict__, scope)  # noqa: S102 - G1-checked host statements
    missing = [n for n in outputs if n not in scope]
    if missing:
        raise RuntimeError(f"the region's statements leave no {missing}; the candidate must write every output")
    return [scope[n] for n in outputs]


@op("run_region")
def run_region(req: dict) -> dict:
    state = get_bundle(req)
    if not state.launches:
        run_baseline(req)
    fill = req.get("poison_fill", "nan")
    if fill not in FILLS:
        raise ValueError(f"poison_fill {fill!r}; use one of {FILLS}")
    graph = req.get("graph", 0)
    tols = cmp.tolerances(req.get("tolerances"))
    outputs = req["outputs"]
    inputs = _inputs(state, req)
    # Each side's copies of the inputs, and at least as much again for what the statements allocate
    # (outputs and, on the original's side, the internal buffers): a lower bound, the plan's spill
    # makes room for it before anything runs.
    memory.reserve(3 * memory.storage_bytes(inputs.values()) + cmp.compare_allowance(), "G2 of a region",
                   keep=_bound_records(state, req))
    baseline = state.modules[graph]
    candidate = stitched_modules(state, {"source": req["source"], "graph": graph})[graph]
    want = _run(baseline, req["original"], inputs, outputs, fill)
    got = _run(candidate, req["candidate"], inputs, outputs, fill)
    report = cmp.compare_args(got, want, tols)
    report["names"] = outputs
    out = {"match": report["ok"], "comparison": report, "poison_fill": fill}
    if req.get("repeat"):
        # The original's outputs are compared already: freed before the candidate runs again, so the
        # repeat holds no more than the first candidate run did (row 09's region G2 held a fourth
        # input-sized tensor here, 360 MB over the reservation).
        del want
        again = cmp.compare_args(_run(candidate, req["candidate"], inputs, outputs, fill), got, tols)
        out["deterministic"] = again["ok"]
        out["repeat_comparison"] = again
        out["match"] = out["match"] and again["ok"]
        rounding = (report["ok"] or report["rounding_only"]) and (again["ok"] or again["rounding_only"])
    else:
        rounding = report["rounding_only"]
    out["rounding_only"] = not out["match"] and rounding
    return out
