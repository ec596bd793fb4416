"""libdevice for Triton's interpreter: CUDA's math library, evaluated by ATen on the CPU.

Inductor's kernels call `libdevice.<fn>` (tanh, pow, erfinv, bessel functions, ...).
On the GPU those are extern calls into NVIDIA's libdevice; Triton's interpreter
cannot run extern calls (`create_extern_elementwise` raises), and tl.math covers
only a handful of them. libdevice is vendor code, like cuBLAS, so in CPU mode it
goes where the other vendor calls go: ATen on the CPU. Each function below takes
the interpreter's tensors (a numpy array inside a tl.tensor), runs the ATen op
on them, and wraps the result back, so one small table covers every function
Inductor and Helion emit, at ATen's speed and accuracy (the interpreter's own
tl.math.erf, for instance, is a per-element Python loop).

Results keep the input's float dtype, as libdevice's fp32/fp64 variants do;
predicates (isnan, isinf, signbit, ...) return int32 like libdevice's
`__nv_isnanf`, which Inductor then casts with `.to(tl.int1)`.
"""

from __future__ import annotations

import types

import torch
import triton.language as tl

from .interp_tensors import TL_TO_TORCH, from_torch, shape_of, to_torch


def elementwise(name: str, op, out_dtype: torch.dtype | None = None):
    """libdevice.<name>, evaluated by `op` (torch tensors in, torch tensor out).

    Arguments broadcast like Triton's extern_elementwise; Python scalars take the
    dtype of the first tensor argument; the result has out_dtype, or that dtype.
    """

    def fn(*args, **_ignored):  # libdevice functions take a `_semantic`/`_builder` keyword
        args = [a.value if isinstance(a, tl.constexpr) else a for a in args]
        tensors = [a for a in args if isinstance(a, tl.tensor)]
        if not tensors:
            raise TypeError(f"libdevice.{name}: needs at least one tensor argument, got {args!r}")
        dtype = TL_TO_TORCH[tensors[0].dtype.scalar]
        values = [to_torch(a) if isinstance(a, tl.tensor) else torch.tensor(a, dtype=dtype) for a in args]
        result = op(*values).to(out_dtype or dtype)
        return from_torch(result, torch.broadcast_shapes(*(shape_of(t) for t in tensors)))

    fn.__name__ = name
    return fn


def _exact_fma(x, y, z):
    # The float64 product of two floats of up to 24 significant bits is exact, so
    # this is a correctly rounded fp32 fma up to rare double-rounding ties.
    return torch.addcmul(z.double(), x.double(), y.double()).to(x.dtype)


def _round_half_away(x):
    # libdevice.round rounds halves away from zero; torch.round rounds them to even.
    # (floor(|x| + 0.5) would be wrong where the addition itself rounds up, e.g. 0.49999997.)
    whole = torch.trunc(x)
    tie = (x - whole).abs() == 0.5
    return torch.where(tie, whole + torch.sign(x), torch.round(x))


def _ilogb(x):
    # frexp gives x = m * 2**e with |m| in [0.5, 1), so the unbiased exponent is e - 1.
    return torch.frexp(x).exponent - 1


_UNARY = {
    "abs": torch.abs, "fabs": torch.abs, "acos": torch.acos, "acosh": torch.acosh, "asin": torch.asin,
    "asinh": torch.asinh, "atan": torch.atan, "atanh": torch.atanh, "cbrt": lambda x: torch.sign(x) * x.abs().pow(1 / 3),
    "ceil": torch.ceil, "cos": torch.cos, "cosh": torch.cosh, "erf": torch.erf, "erfc": torch.erfc,
    "erfinv": torch.erfinv, "erfcx": torch.special.erfcx, "exp": torch.exp, "exp2": torch.exp2,
    "exp10": lambda x: torch.pow(10.0, x), "expm1": torch.expm1, "floor": torch.floor, "lgamma": torch.lgamma,
    "log": torch.log, "log10": torch.log10, "log1p": torch.log1p, "log2": torch.log2, "rsqrt": torch.rsqrt,
    "sin": torch.sin, "sinh": torch.sinh, "sqrt": torch.sqrt, "tan": torch.tan, "tanh": torch.tanh,
    "fast_tanhf": torch.tanh, "trunc": torch.trunc, "round": _round_half_away,
    # nearbyint and rint use the current rounding mode: round half to even.
    "nearbyint": torch.round, "rint": torch.round,
    "j0": torch.special.bessel_j0, "j1": torch.special.bessel_j1, "y0": torch.special.bessel_y0,
    "y1": torch.special.bessel_y1, "cyl_bessel_i0": torch.special.i0, "cyl_bessel_i1": torch.special.i1,
}
_BINARY = {
    "pow": torch.pow, "atan2": torch.atan2, "hypot": torch.hypot, "fmod": torch.fmod, "copysign": torch.copysign,
    "nextafter": torch.nextafter, "fmax": torch.fmax, "fmin": torch.fmin, "ldexp": lambda x, n: torch.ldexp(x, n.to(x.dtype)),
    "div_rn": torch.div, "mul_rn": torch.mul, "add_rn": torch.add, "sub_rn": torch.sub,
}
_OTHER = {
    "fma": (_exact_fma, None),
    "isnan": (torch.isnan, torch.int32), "isinf": (torch.isinf, torch.int32),
    "isfinited": (torch.isfinite, torch.int32), "finitef": (torch.isfinite, torch.int32),
    "signbit": (torch.signbit, torch.int32), "ilogb": (_ilogb, torch.int32),
    "llrint": (torch.round, torch.int64),
}


class _Libdevice(types.SimpleNamespace):
    def __getattr__(self, name: str):  # only reached for names not in the table
        raise AttributeError(f"libdevice.{name} has no CPU equivalent yet; add it to kernelopt/worker/runtime/libdevice_cpu.py")


def _build() -> _Libdevice:
    table = {name: elementwise(name, op) for name, op in {**_UNARY, **_BINARY}.items()}
    table.update({name: elementwise(name, op, out) for name, (op, out) in _OTHER.items()})
    return _Libdevice(**table)


libdevice = _build()
"""What `from ...triton_helpers import libdevice` gives a kernel in CPU mode."""

NAMES = sorted(vars(libdevice))
