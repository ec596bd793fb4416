"""Inductor's reduction helpers, vectorized for Triton's interpreter.

triton_helpers.max2, min2, max_with_index, min_with_index, welford, prod and
any are `tl.reduce` calls with a @triton.jit combine function. The interpreter
has fast paths only for tl.sum/tl.max/tl.min/tl.argmax/tl.argmin's own combine
functions; any other combine function runs once per element in Python (a
128 x 512 softmax takes two minutes). These replacements compute the same result
with one ATen reduction each, following the combine functions' rules:

- max2/min2: NaN wins (`mask |= a != a`), which amax/amin do too.
- max_with_index/min_with_index: the extreme value, NaN above everything and NaNs
  equal to each other; among equals the lowest *index value* (not position).
- welford: Chan's combination of (mean, m2, weight) partials, weight-0 partials
  contributing nothing and equal infinite means giving delta 0, as welford_combine
  guards; computed in float64 and rounded once, so it may differ from the GPU's
  pairwise tree in the last bits.
"""

from __future__ import annotations

import torch

from .interp_tensors import from_torch, shape_of, to_torch


def _reduce(fn):
    """Wrap fn(*torch tensors shaped like the blocks, dim) -> tuple of torch results."""

    def helper(*args):
        *tensors, dim = args
        shape = shape_of(tensors[0])
        dim = getattr(dim, "value", dim) % len(shape)
        values = [to_torch(t).reshape(shape) for t in tensors]
        out_shape = shape[:dim] + shape[dim + 1 :]
        results = [from_torch(r.to(v.dtype), out_shape) for r, v in zip(fn(*values, dim), values)]
        return results[0] if len(results) == 1 else tuple(results)

    helper.__name__ = fn.__name__
    return helper


def _extreme_with_index(value, index, dim, extreme):
    best = extreme(value, dim, keepdim=True)  # NaN if any NaN, as the combine function's NaN rule
    hit = (value == best) | (value.isnan() & best.isnan()) if value.is_floating_point() else value == best
    no_hit = torch.iinfo(index.dtype).max if not index.is_floating_point() else float("inf")
    chosen = torch.where(hit, index, no_hit).amin(dim, keepdim=True)
    # The value at the chosen element (so -0.0 versus 0.0 comes from that element too).
    position = (hit & (index == chosen)).to(torch.uint8).argmax(dim, keepdim=True)
    return value.gather(dim, position).squeeze(dim), chosen.squeeze(dim)


@_reduce
def max2(a, dim):
    return (a.amax(dim),)


@_reduce
def min2(a, dim):
    return (a.amin(dim),)


@_reduce
def max_with_index(value, index, dim):
    return _extreme_with_index(value, index, dim, torch.amax)


@_reduce
def min_with_index(value, index, dim):
    return _extreme_with_index(value, index, dim, torch.amin)


@_reduce
def prod(a, dim):
    return (a.prod(dim),)


@_reduce
def any(a, dim):  # noqa: A001 - the helper's own name
    return (a.any(dim),)


@_reduce
def welford(mean, m2, weight, dim):
    mean, m2, weight = mean.double(), m2.double(), weight.double()
    total = weight.sum(dim, keepdim=True)
    safe_total = torch.where(total == 0, 1.0, total)
    # Equal (even infinite) partial means give mean exactly, never inf - inf.
    first = mean.narrow(dim, 0, 1)
    spread = torch.where(weight == 0, 0.0, torch.where(mean == first, 0.0, mean - first))
    out_mean = first + torch.where(total == 0, 0.0, (weight * spread).sum(dim, keepdim=True) / safe_total)
    delta = torch.where((weight == 0) | (mean == out_mean), 0.0, mean - out_mean)
    out_m2 = m2.sum(dim, keepdim=True) + (weight * delta * delta).sum(dim, keepdim=True)
    return out_mean.squeeze(dim), out_m2.squeeze(dim), total.squeeze(dim)


HELPERS = {f.__name__: f for f in (max2, min2, max_with_index, min_with_index, prod, any, welford)}
"""Replacements for the triton_helpers functions of the same names."""
