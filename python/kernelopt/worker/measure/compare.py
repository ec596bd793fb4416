"""Tensor comparison with the project's tolerances (docs/protocol.md).

Default tolerances: DEFAULT_TOLERANCES, the engine's defaults (verify::Tolerances in
engine/src/verify/cascade.h, stated in docs/gates.md; tests/python/test_gate_defaults.py
keeps the two equal); a request may override them per dtype (`tolerances`, parsed by
`tolerances()`; the engine sends its CascadeOptions). NaN and Inf positions
must match exactly; integer and bool tensors must be equal.

Three criteria, all reported:
- `allclose`: |a - b| <= atol + rtol * |b| elementwise, the kernel-level rule (G2);
- `scaled`: max |a - b| <= rtol * scale with scale = max |b| over finite values
  (atol when every finite value is zero), the model-level rule ("relative to the
  output's scale", G3 and the end-to-end gate);
- `rounding`: max |a - b| <= rtol / 10 * scale, NaN/Inf positions matching: what a
  changed summation order leaves (a long prefix sum crosses zero where its partial
  sums are large, so elementwise rules fail on pure rounding there). G2 lets such a
  candidate through only on condition that G3 shows it no less accurate than the
  baseline against float64 (docs/gates.md).
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves

Tolerances = dict[torch.dtype, tuple[float, float]]  # dtype -> (atol, rtol)

DEFAULT_TOLERANCES: Tolerances = {
    torch.float32: (1e-4, 1e-4),
    torch.float64: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 1e-2),
}
# The `rounding` criterion's share of rtol (relative to the output's scale).
ROUNDING_FRACTION = 0.1
_BY_NAME = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16}


def tolerances(spec: dict | None) -> Tolerances:
    """The defaults overridden by a request's `tolerances`: {"float32": {"atol": a, "rtol": r}, ...}.
    An unknown dtype name or a negative value is an error (a typo must not silently keep a default)."""
    out = dict(DEFAULT_TOLERANCES)
    for name, t in (spec or {}).items():
        if name not in _BY_NAME:
            raise ValueError(f"tolerances: unknown dtype {name!r}; use one of {sorted(_BY_NAME)}")
        atol, rtol = float(t["atol"]), float(t["rtol"])
        if atol < 0 or rtol < 0:
            raise ValueError(f"tolerances: {name} atol={atol}, rtol={rtol}; both must be >= 0")
        out[_BY_NAME[name]] = (atol, rtol)
    return out


def compare_tensor(got: torch.Tensor, want: torch.Tensor, tols: Tolerances | None = None,
                   promote: bool = False) -> dict:
    """`got` against `want` by the three criteria. `promote`: `got` may be of a narrower floating
    dtype than a float64 `want` (a model output against its float64 reference), read as float64 like
    `want` (the tolerances are `want`'s, as when `got` was upcast whole). The tensors may live on different devices (a reference kept on the host).

    Computed in slices along the largest dimension, each converted to float64 on `got`'s device,
    never whole float64 copies: the slice size comes from the worker's memory plan. Every quantity
    is a maximum, a conjunction or an elementwise test, so the verdict and every reported number
    are the same whatever the slicing."""
    out = {"shape": list(want.shape), "dtype": str(want.dtype).removeprefix("torch.")}
    if got.dtype != want.dtype:  # against a float64 reference: the output's own precision (G3's rounding floor)
        out["got_dtype"] = str(got.dtype).removeprefix("torch.")
    dtype_ok = got.dtype == want.dtype or (promote and want.dtype == torch.float64 and got.is_floating_point())
    if got.shape != want.shape or not dtype_ok:
        out.update(ok=False, reason=f"got {list(got.shape)} {got.dtype}, want {list(want.shape)} {want.dtype}")
        return out
    if not want.is_floating_point():
        dev = _compute_device(got, want)
        diff = sum(int((g.to(dev) != w.to(dev)).sum()) for g, w in slices(got, want, 2 * want.element_size() + 1))
        out.update(ok=diff == 0, mismatched=diff)
        return out
    atol, rtol = (tols or DEFAULT_TOLERANCES).get(want.dtype, (0.0, 0.0))
    nan_ok = inf_ok = allclose = overflow_ok = True
    max_abs = scale = 0.0
    n_finite = mismatched = 0
    dev = _compute_device(got, want)
    for gs, ws in slices(got, want, _BYTES_PER_COMPARED_ELEMENT):
        # Own copies (copy=True): a float64 slice already on `dev` would otherwise be the caller's
        # tensor itself, and the masking below works in place.
        g, w = gs.to(dev, torch.float64, copy=True), ws.to(dev, torch.float64, copy=True)
        nan_ok = nan_ok and bool(torch.equal(torch.isnan(g), torch.isnan(w)))
        if not (torch.equal(torch.isinf(g) & (g > 0), torch.isinf(w) & (w > 0))
                and torch.equal(torch.isinf(g) & (g < 0), torch.isinf(w) & (w < 0))):
            inf_ok = False
            overflow_ok = overflow_ok and _infs_at_overflow(g, w, rtol, want.dtype)
        # Elements where either side is not finite count as zero difference and zero magnitude
        # (their positions were checked above); masked in place rather than gathered by a boolean
        # index, whose nonzero() made 8 bytes per element and dimension.
        skip = ~(torch.isfinite(w) & torch.isfinite(g))
        count = w.numel() - int(skip.sum())
        diff = g.sub_(w).abs_().masked_fill_(skip, 0.0)
        wf = w.abs_().masked_fill_(skip, 0.0)
        del g, w, skip
        if count:
            n_finite += count
            max_abs = max(max_abs, float(diff.max()))
            scale = max(scale, float(wf.max()))
            # Counted, not only tested: how many elements are off tells a few rounding outliers from a
            # whole block of wrong values (a reference that came back different read 0.96 away).
            bad = int((diff > wf.mul_(rtol).add_(atol)).sum())
            mismatched += bad
            allclose = allclose and bad == 0
    scaled = max_abs <= (rtol * scale if scale > 0 else atol)
    rounding = scale > 0 and max_abs <= ROUNDING_FRACTION * rtol * scale
    out.update(
        ok=nan_ok and inf_ok and allclose,
        scaled_ok=nan_ok and inf_ok and scaled,
        rounding_ok=nan_ok and (inf_ok or overflow_ok) and (allclose or rounding),
        # The elements finite on both sides alone, at rounding level or within tolerance: what G2 asks of
        # a run whose NaN/Inf positions the original itself does not keep under another blocking.
        finite_ok=allclose or rounding,
        nan_positions_match=nan_ok,
        inf_positions_match=inf_ok,
        infs_at_overflow=not inf_ok and overflow_ok,
        max_abs=max_abs,
        max_rel=max_abs / scale if scale > 0 else max_abs,
        mismatched=mismatched,  # finite elements outside atol + rtol * |want|
        scale=scale,
        atol=atol,
        rtol=rtol,
    )
    return out


def _infs_at_overflow(g: torch.Tensor, w: torch.Tensor, rtol: float, dtype: torch.dtype) -> bool:
    """Whether every position where one side is +-inf and the other not is a value at the edge of `dtype`'s
    range on the other side: finite, of the same sign, within rtol of the largest finite value. Two orders of
    a long product (a cumprod of special values) round the same true value, just past the largest finite
    one, to inf in one and to that value in the other: a rounding-level difference, which G2 lets through
    only on the float64 rule (the `rounding` criterion above). `g` and `w` are float64 slices."""
    edge = (1.0 - rtol) * torch.finfo(dtype).max
    g_inf = torch.isinf(g)
    other = torch.where(g_inf, w, g)  # the side that is not inf where exactly one is
    positive = torch.where(g_inf, g > 0, w > 0)  # the inf's sign
    mismatch = (g_inf != torch.isinf(w)) | (torch.isinf(g) & torch.isinf(w) & (g != w))
    at_edge = torch.isfinite(other) & (other.abs() >= edge) & ((other > 0) == positive)
    return bool((at_edge | ~mismatch).all())


# float64 copies of both slices, their difference, the finite mask and the masked copies (and, where
# infinities differ, the overflow check's float64 and masks): what one compared element costs while
# its slice is alive.
_BYTES_PER_COMPARED_ELEMENT = 56
# No slice above this many elements (about 1.5 GB of temporaries), none below the floor.
_MAX_SLICE = 1 << 25
_MIN_SLICE = 1 << 10


def slice_elements(bytes_per_element: int) -> int:
    """How many elements one slice may hold: half of what the memory plan leaves room for, within bounds.

    The room under the soft target is at least a sixteenth of the target: a device already over it
    (the soft target is soft: G2's two runs of a GB-sized kernel may pass it) left no room, and 1K
    slices of a 6 GB output took minutes of Python where 16M-element slices take a tenth of a
    second. Never more than the hard budget leaves free."""
    from . import memory

    avail = min(memory.free(), max(memory.room(), memory.target() // 16))
    room = avail // 2 // max(1, bytes_per_element)
    return int(max(_MIN_SLICE, min(_MAX_SLICE, room)))


def compare_allowance() -> int:
    """What a comparison's slices may take at most beside the tensors compared (slice_elements): a
    sixteenth of the soft target, within the slice cap. 0 in CPU mode (the budget sizes slices there)."""
    from . import memory

    return min(memory.target() // 16, _MAX_SLICE * _BYTES_PER_COMPARED_ELEMENT) if memory.on_gpu() else 0


def _compute_device(got: torch.Tensor, want: torch.Tensor) -> torch.device:
    """Where slices are compared: a GPU whenever the worker has one, also for two tensors kept on the
    host (a reference against the baseline's output): float64 arithmetic over GBs is slow on the CPU."""
    from . import memory

    if got.is_cuda:
        return got.device
    if want.is_cuda:
        return want.device
    return torch.device("cuda") if memory.on_gpu() else got.device


def slices(got: torch.Tensor, want: torch.Tensor, bytes_per_element: int):
    """Matching slices of `got` and `want`: in storage order when both have one dense layout, else along
    their largest dimension (whole for small tensors). Every comparison here is elementwise, a maximum
    or a conjunction, so any matching slicing gives the same answer."""
    limit = slice_elements(bytes_per_element)
    n = want.numel()
    if n <= limit or want.dim() == 0:
        yield got, want
        return
    from .memory import bounded_parts, flat_view

    if got.shape == want.shape and got.stride() == want.stride():
        flat_g, flat_w = flat_view(got), flat_view(want)
        if flat_g is not None and flat_w is not None:
            # One dense layout on both sides: slices in storage order, each one span of memory. Slices
            # along a dimension that is not innermost are strided, and a strided slice of a host tensor
            # is gathered on the host before its copy: a 5.2 GB transposed output took 14 s.
            for start in range(0, n, limit):
                yield flat_g[start:start + limit], flat_w[start:start + limit]
            return
    yield from bounded_parts((got, want), limit)


def self_comparison(w: torch.Tensor, tols: Tolerances | None = None) -> dict:
    """What compare_tensor(w, w) reports, without its float64 slices: every criterion holds, no
    difference; only the scale (the largest finite magnitude) needs a read."""
    out = {"shape": list(w.shape), "dtype": str(w.dtype).removeprefix("torch.")}
    if not w.is_floating_point():
        return dict(out, ok=True, mismatched=0)
    atol, rtol = (tols or DEFAULT_TOLERANCES).get(w.dtype, (0.0, 0.0))
    scale = 0.0
    dev = _compute_device(w, w)
    for ws, _ in slices(w, w, 2 * w.element_size() + 1):
        # |x| with the non-finite elements as 0 (no boolean index: its nonzero() made 8 bytes per
        # element and dimension, 650 MB beside a 1 GB bf16 input).
        a = torch.abs(ws.to(dev)).nan_to_num_(nan=0.0, posinf=0.0)
        if a.numel():
            scale = max(scale, float(a.max()))
    return dict(out, ok=True, scaled_ok=True, rounding_ok=True, finite_ok=True, nan_positions_match=True,
                inf_positions_match=True, infs_at_overflow=False, max_abs=0.0, max_rel=0.0, mismatched=0, scale=scale,
                atol=atol, rtol=rtol)


def compare_args(got: list, want: list, tols: Tolerances | None = None, skip: set | frozenset = frozenset()) -> dict:
    """Every tensor argument after a kernel run (outputs, in-place buffers and inputs alike),
    except the argument indices in `skip` (scratch space whose contents nobody reads)."""
    per = []
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor) and i not in skip:
            # A read-only input both runs shared (the lean path) is equal to itself: the same record,
            # from one read instead of float64 slices (a second per G2 run on a GB-sized input).
            per.append(dict(self_comparison(w, tols) if g is w else compare_tensor(g, w, tols), arg=i))
    # rounding_only: no exact-rule match, but every difference is rounding-level (see the module doc).
    ok = all(p["ok"] for p in per)
    return {"ok": ok, "rounding_only": not ok and all(p.get("rounding_ok", p["ok"]) for p in per), "args": per}


def compare_outputs(got, want, tols: Tolerances | None = None, promote: bool = False) -> dict:
    """Model outputs (any pytree) by the model-level rule (`promote`: against a float64 reference)."""
    gl = [x for x in tree_leaves(got) if isinstance(x, torch.Tensor)]
    wl = [x for x in tree_leaves(want) if isinstance(x, torch.Tensor)]
    if len(gl) != len(wl):
        return {"ok": False, "reason": f"{len(gl)} output tensors, want {len(wl)}", "outputs": []}
    per = [compare_tensor(g, w, tols, promote) for g, w in zip(gl, wl)]
    return {"ok": all(p.get("scaled_ok", p["ok"]) for p in per), "outputs": per}
