"""tl.associative_scan and tl.reduce with @triton.jit combine functions, vectorized for the interpreter.

Triton's interpreter (triton/runtime/interpreter.py) has numpy fast paths only for
the combine functions of tl.sum/tl.max/tl.min/tl.argmax/tl.argmin/tl.cumsum/tl.cumprod.
Any other combine function -- Inductor's `_triton_helper_fn_add0` in every split_scan
and cumsum kernel, cummax's (value, index) pair, logcumsumexp -- runs through
`ScanOps.generic_scan` / `ReduceOps.generic_reduce`, which call it once per element on
1-element tensors (about 50 us each): a cumsum over 4 x 2M elements took 9.5 minutes.

Triton requires combine functions to be associative (the GPU scans and reduces in
tree order too), so both can be computed with log2(n) calls of the combine function on
whole blocks instead of n calls on single elements:

- scan: Hillis-Steele. At step d = 1, 2, 4, ... every position i >= d becomes
  combine(acc[i - d], acc[i]), the left operand always the earlier segment, so
  non-commutative combine functions stay right. (The interpreter insists on
  power-of-2 block shapes, so each step combines all n positions and drops the
  first d results.)
- reduce: pairwise tree. Adjacent pairs (0, 1), (2, 3), ... are combined in order;
  block dimensions are powers of 2, so every level halves exactly.

Everything else is the interpreter's: `apply_impl` still takes its own fast paths and
flips the input for `reverse=True`; the combine function gets interpreter tensors of the
operands' dtypes, so dtype promotion inside it is the interpreter's; each result is
stored in the operand's storage dtype as generic_scan/generic_reduce store theirs
(bfloat16 as its uint16 bits); multi-operand (tuple) combine functions, any axis, and
reduce's axis=None / keep_dims are handled as the originals handle them. Floating-point
results differ from the sequential order by rounding only.

A combine function that turns a value into a Python bool or int (`if a > b:`, `not x`)
is legal on the GPU, where it sees scalars, but silently wrong on a block in the
interpreter; such a conversion raises while a combine function runs on blocks, and that
scan/reduce takes the interpreter's per-element path (below).

`install()` replaces the two methods on the interpreter's classes and wraps its
`_patch_lang_tensor` for that trap (process-wide: the interpreter looks them up per call,
and a kernel's `tl` must be the real module for the interpreter to patch it); CPU mode
calls it before it builds a kernel. `uninstall()` puts the originals back.
"""

from __future__ import annotations

import numpy as np
import triton.language as tl
from triton.runtime import interpreter

# The interpreter's own methods, the fallback for combine functions that need scalars.
_PER_ELEMENT_SCAN = interpreter.ScanOps.generic_scan
_PER_ELEMENT_REDUCE = interpreter.ReduceOps.generic_reduce
_PATCH_LANG_TENSOR = interpreter._patch_lang_tensor
_ORIGINALS: dict[str, object] = {}


def install() -> None:
    """Use the vectorized scan and reduce in Triton's interpreter (idempotent)."""
    if _ORIGINALS:
        return
    _ORIGINALS["scan"] = interpreter.ScanOps.generic_scan
    _ORIGINALS["reduce"] = interpreter.ReduceOps.generic_reduce
    _ORIGINALS["patch_lang_tensor"] = interpreter._patch_lang_tensor
    interpreter.ScanOps.generic_scan = generic_scan
    interpreter.ReduceOps.generic_reduce = generic_reduce
    interpreter._patch_lang_tensor = _patch_lang_tensor


def uninstall() -> None:
    """Put the interpreter's per-element scan and reduce back."""
    if not _ORIGINALS:
        return
    interpreter.ScanOps.generic_scan = _ORIGINALS.pop("scan")
    interpreter.ReduceOps.generic_reduce = _ORIGINALS.pop("reduce")
    interpreter._patch_lang_tensor = _ORIGINALS.pop("patch_lang_tensor")


# ---------------------------------------------------------------- combine functions that need scalars
#
# On the GPU a combine function sees scalars, so Python control flow on its values is legal
# there: `if a > b:`, `x and y`, `not b_isnan` (triton_helpers.maximum_with_index has that).
# The interpreter turns a tensor into a Python bool with `bool(data) if data.size == 1 else
# True`: right for the per-element path, silently wrong for a block. So while a combine
# function runs on blocks, turning a block into a bool (or an index) raises _NeedsScalars
# and that scan/reduce takes the per-element path. The interpreter re-installs its own
# __bool__ whenever a nested @triton.jit function is called (_patch_lang), hence the trap
# is also set from its _patch_lang_tensor while a combine function runs.


class _NeedsScalars(Exception):
    pass


_trapping = 0  # > 0 while a combine function runs on blocks
_SCALAR_ONLY: set = set()  # combine functions (the Python functions) found to need scalars


def _trap_bool(self):
    data = self.handle.data
    if data.size != 1:
        raise _NeedsScalars("a block used as a Python bool in a combine function")
    return bool(data)


def _trap_index(self):
    data = self.handle.data
    if data.size != 1:
        raise _NeedsScalars("a block used as a Python int in a combine function")
    return int(data)


def _patch_lang_tensor(tensor, scope):
    _PATCH_LANG_TENSOR(tensor, scope)
    if _trapping:
        scope.set_attr(tensor, "__bool__", _trap_bool)
        scope.set_attr(tensor, "__index__", _trap_index)


def _needs_scalars(error: BaseException) -> bool:
    # Nested @triton.jit calls wrap exceptions in InterpreterError (`raise ... from e`).
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, _NeedsScalars):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _along(axis: int, ndim: int, start: int, stop: int, step: int = 1) -> tuple:
    return (slice(None),) * axis + (slice(start, stop, step),) + (slice(None),) * (ndim - axis - 1)


def _combine(op, dtypes, left: list[np.ndarray], right: list[np.ndarray]) -> list[np.ndarray]:
    """op.combine_fn on whole blocks: operand j of `left` and `right` (equal shapes) has tl dtype
    dtypes[j]; returns the results as arrays of the operands' storage dtypes."""
    args = [op.to_tensor(a, dt) for a, dt in zip(left, dtypes)] + [op.to_tensor(b, dt) for b, dt in zip(right, dtypes)]
    global _trapping
    tensor = tl.core.tensor
    saved = tensor.__bool__, tensor.__index__
    tensor.__bool__, tensor.__index__ = _trap_bool, _trap_index
    _trapping += 1
    try:
        ret = op.combine_fn.fn(*args)
    except Exception as e:
        if _needs_scalars(e):
            _SCALAR_ONLY.add(op.combine_fn.fn)
            raise _NeedsScalars() from e
        raise
    finally:
        _trapping -= 1
        tensor.__bool__, tensor.__index__ = saved
    ret = ret if isinstance(ret, tuple) else (ret,)
    if len(ret) != len(left):
        raise ValueError(f"combine function {op.combine_fn} returned {len(ret)} values for {len(left)} operands")
    out = []
    for r, a in zip(ret, left):
        data = r.handle.data if isinstance(r, tl.core.tensor) else np.asarray(getattr(r, "value", r))
        # As generic_scan/generic_reduce store `.item()` into an array of the operand's dtype.
        out.append(np.broadcast_to(data, a.shape).astype(a.dtype, copy=False))
    return out


def generic_scan(self, input):
    """ScanOps.generic_scan: inclusive scan of the tuple `input` along self.axis (already flipped
    for reverse), Hillis-Steele, log2(n) combine calls."""
    if self.combine_fn.fn not in _SCALAR_ONLY:
        try:
            return _scan_blocks(self, input)
        except _NeedsScalars:
            pass
    return _PER_ELEMENT_SCAN(self, input)


def _scan_blocks(self, input):
    dtypes = [arg.dtype for arg in input]
    acc = [np.array(arg.handle.data) for arg in input]  # copies, updated in place
    ndim = acc[0].ndim
    axis = self.axis % ndim
    n = acc[0].shape[axis]
    d = 1
    while d < n:
        # Blocks must keep power-of-2 shapes, so the combine runs on all n positions:
        # the left operand is acc shifted by d, its first d positions filled with the right
        # operand's own values (in the combine's domain), whose results are dropped.
        head = _along(axis, ndim, 0, d)
        left = [np.concatenate([a[head], a[_along(axis, ndim, 0, n - d)]], axis=axis) for a in acc]
        results = _combine(self, dtypes, left, acc)
        for a, r in zip(acc, results):
            tail = _along(axis, ndim, d, n)
            a[tail] = r[tail]
        d *= 2
    return [self.to_tensor(a, dt) for a, dt in zip(acc, dtypes)]


def generic_reduce(self, input):
    """ReduceOps.generic_reduce: reduce the tuple `input` along self.axis (None: all of it),
    pairwise, log2(n) combine calls; output shapes as the original's."""
    if self.combine_fn.fn not in _SCALAR_ONLY:
        try:
            return _reduce_blocks(self, input)
        except _NeedsScalars:
            pass
    return _PER_ELEMENT_REDUCE(self, input)


def _reduce_blocks(self, input):
    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    dtypes = [arg.dtype for arg in input]
    acc = [arg.handle.data for arg in input]
    input_shape = acc[0].shape
    ndim = len(input_shape)
    axis = axis % ndim
    n = input_shape[axis]
    if n == 0 or n & (n - 1):  # no block has such a dimension
        raise _NeedsScalars()
    while n > 1:
        n //= 2
        acc = _combine(
            self, dtypes,
            [a[_along(axis, ndim, 0, 2 * n, 2)] for a in acc],
            [a[_along(axis, ndim, 1, 2 * n, 2)] for a in acc],
        )
    ret = []
    for a, arg, dt in zip(acc, input, dtypes):
        data = np.take(a, 0, axis=axis).astype(arg.handle.data.dtype, copy=False)
        # Packing exactly as generic_reduce packs (input_shape is the flattened one for axis=None).
        if self.keep_dims:
            if original_axis is not None:
                data = np.expand_dims(data, axis)
            else:
                for _ in range(len(input_shape)):
                    data = np.expand_dims(data, 0)
        elif original_axis is None:
            data = data.item()
        ret.append(self.to_tensor(data, dt))
    return ret
