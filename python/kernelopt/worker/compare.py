"""Tensor comparison with the project's tolerances (docs/protocol.md):
fp32/fp64 1e-4, fp16/bf16 1e-2; NaN and Inf positions must match exactly;
integer and bool tensors must be equal.

Two criteria, both reported:
- `allclose`: |a - b| <= atol + rtol * |b| elementwise (atol = rtol = tol), the
  kernel-level rule (G2);
- `scaled`: max |a - b| <= tol * scale with scale = max |b| over finite values,
  the model-level rule ("relative to the output's scale").
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves

TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2}


def tolerance(dtype: torch.dtype) -> float:
    return TOLERANCE.get(dtype, 0.0)


def compare_tensor(got: torch.Tensor, want: torch.Tensor, tol: float | None = None) -> dict:
    out = {"shape": list(want.shape), "dtype": str(want.dtype).removeprefix("torch.")}
    if got.shape != want.shape or got.dtype != want.dtype:
        out.update(ok=False, reason=f"got {list(got.shape)} {got.dtype}, want {list(want.shape)} {want.dtype}")
        return out
    if not want.is_floating_point():
        diff = int((got != want).sum())
        out.update(ok=diff == 0, mismatched=diff)
        return out
    tol = tolerance(want.dtype) if tol is None else tol
    g, w = got.double(), want.double()
    nan_ok = bool(torch.equal(torch.isnan(g), torch.isnan(w)))
    inf_ok = bool(torch.equal(torch.isinf(g) & (g > 0), torch.isinf(w) & (w > 0))) and bool(
        torch.equal(torch.isinf(g) & (g < 0), torch.isinf(w) & (w < 0)))
    finite = torch.isfinite(w) & torch.isfinite(g)
    diff = (g - w).abs()[finite]
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(w[finite].abs().max()) if diff.numel() else 0.0
    allclose = bool(((g - w).abs()[finite] <= tol + tol * w.abs()[finite]).all()) if diff.numel() else True
    scaled = max_abs <= tol * (scale if scale > 0 else 1.0)
    out.update(
        ok=nan_ok and inf_ok and allclose,
        scaled_ok=nan_ok and inf_ok and scaled,
        nan_positions_match=nan_ok,
        inf_positions_match=inf_ok,
        max_abs=max_abs,
        max_rel=max_abs / scale if scale > 0 else max_abs,
        scale=scale,
        tolerance=tol,
    )
    return out


def compare_args(got: list, want: list) -> dict:
    """Every tensor argument after a kernel run (outputs, in-place buffers and inputs alike)."""
    per = []
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, torch.Tensor):
            per.append(dict(compare_tensor(g, w), arg=i))
    return {"ok": all(p["ok"] for p in per), "args": per}


def compare_outputs(got, want) -> dict:
    """Model outputs (any pytree) by the model-level rule."""
    gl = [x for x in tree_leaves(got) if isinstance(x, torch.Tensor)]
    wl = [x for x in tree_leaves(want) if isinstance(x, torch.Tensor)]
    if len(gl) != len(wl):
        return {"ok": False, "reason": f"{len(gl)} output tensors, want {len(wl)}", "outputs": []}
    per = [compare_tensor(g, w) for g, w in zip(gl, wl)]
    return {"ok": all(p.get("scaled_ok", p["ok"]) for p in per), "outputs": per}
