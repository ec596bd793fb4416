"""The problem's model run entirely in float64: G3's reference and the baseline's accuracy check.

Converting the module and the inputs is not enough for models that pick their own precision inside
forward() — an fp32 router in a bf16 model (`h.float()`), `softmax(x, dtype=torch.float32)`,
`torch.zeros(n, dtype=torch.float32)`, a factory with the default dtype. Those would mix float32
with float64 (a matmul then fails: "expected mat1 and mat2 to have the same dtype"), or quietly
compute part of the reference at lower precision. Inside `float64_everywhere()` every floating
dtype a torch function is asked for becomes float64, and so does the default dtype.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_NARROWING_METHODS = {torch.Tensor.float, torch.Tensor.half, torch.Tensor.bfloat16}


def _up(v: Any) -> Any:
    return torch.float64 if isinstance(v, torch.dtype) and v.is_floating_point else v


class _Float64(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _NARROWING_METHODS:
            return torch.Tensor.double(args[0])
        args = tuple(_up(a) for a in args)
        kwargs = {k: _up(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)


@contextlib.contextmanager
def float64_everywhere():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with _Float64():
            yield
    finally:
        torch.set_default_dtype(previous)
