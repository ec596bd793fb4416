"""Tensor comparison with the project's tolerances (docs/protocol.md).

Default tolerances (atol, rtol): fp32/fp64 (1e-4, 1e-4), fp16/bf16 (1e-2, 1e-2);
a request may override them per dtype (`tolerances`, parsed by
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


def compare_tensor(got: torch.Tensor, want: torch.Tensor, tols: Tolerances | None = None) -> dict:
    out = {"shape": list(want.shape), "dtype": str(want.dtype).removeprefix("torch.")}
    if got.shape != want.shape or got.dtype != want.dtype:
        out.update(ok=False, reason=f"got {list(got.shape)} {got.dtype}, want {list(want.shape)} {want.dtype}")
        return out
    if not want.is_floating_point():
        diff = int((got != want).sum())
        out.update(ok=diff == 0, mismatched=diff)
        return out
    atol, rtol = (tols or DEFAULT_TOLERANCES).get(want.dtype, (0.0, 0.0))
    g, w = got.double(), want.double()
    nan_ok = bool(torch.equal(torch.isnan(g), torch.isnan(w)))
    inf_ok = bool(torch.equal(torch.isinf(g) & (g > 0), torch.isinf(w) & (w > 0))) and bool(
        torch.equal(torch.isinf(g) & (g < 0), torch.isinf(w) & (w < 0)))
    finite = torch.isfinite(w) & torch.isfinite(g)
    diff = (g - w).abs()[finite]
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(w[finite].abs().max()) if diff.numel() else 0.0
    allclose = bool((diff <= atol + rtol * w.abs()[finite]).all()) if diff.numel() else True
    scaled = max_abs <= (rtol * scale if scale > 0 else atol)
    rounding = scale > 0 and max_abs <= ROUNDING_FRACTION * rtol * scale
    out.update(
        ok=nan_ok and inf_ok and allclose,
        scaled_ok=nan_ok and inf_ok and scaled,
        rounding_ok=nan_ok and inf_ok and (allclose or rounding),
        nan_positions_match=nan_ok,
        inf_positions_match=inf_ok,
        max_abs=max_abs,
        max_rel=max_abs / scale if scale > 0 else max_abs,
        scale=scale,
        atol=atol,
        rtol=rtol,
    )
    return out


def compare_args(got: list, want: list, tols: Tolerances | None = None, skip: set | frozenset = frozenset()) -> dict:
    """Every tensor argument after a kernel run (outputs, in-place buffers and inputs alike),
    except the argument indices in `skip` (scratch space whose contents nobody reads)."""
    per = []
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor) and i not in skip:
            per.append(dict(compare_tensor(g, w, tols), arg=i))
    # rounding_only: no exact-rule match, but every difference is rounding-level (see the module doc).
    ok = all(p["ok"] for p in per)
    return {"ok": ok, "rounding_only": not ok and all(p.get("rounding_ok", p["ok"]) for p in per), "args": per}


def compare_outputs(got, want, tols: Tolerances | None = None) -> dict:
    """Model outputs (any pytree) by the model-level rule."""
    gl = [x for x in tree_leaves(got) if isinstance(x, torch.Tensor)]
    wl = [x for x in tree_leaves(want) if isinstance(x, torch.Tensor)]
    if len(gl) != len(wl):
        return {"ok": False, "reason": f"{len(gl)} output tensors, want {len(wl)}", "outputs": []}
    per = [compare_tensor(g, w, tols) for g, w in zip(gl, wl)]
    return {"ok": all(p.get("scaled_ok", p["ok"]) for p in per), "outputs": per}
