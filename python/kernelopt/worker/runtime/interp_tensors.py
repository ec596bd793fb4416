"""Between Triton-interpreter tensors and torch tensors, for code that runs ATen inside a kernel.

In Triton's interpreter a kernel value is a tl.tensor whose handle holds a numpy
array: a block has its full shape, a scalar is a 1-element array, and bfloat16 is
stored as its uint16 bit pattern (numpy has no bfloat16).
"""

from __future__ import annotations

import numpy as np
import torch
import triton.language as tl
from triton.runtime.interpreter import TensorHandle

TL_TO_TORCH = {
    tl.float16: torch.float16,
    tl.bfloat16: torch.bfloat16,
    tl.float32: torch.float32,
    tl.float64: torch.float64,
    tl.int8: torch.int8,
    tl.int16: torch.int16,
    tl.int32: torch.int32,
    tl.int64: torch.int64,
    tl.uint8: torch.uint8,
    tl.int1: torch.bool,
}
_TORCH_TO_TL = {v: k for k, v in TL_TO_TORCH.items()}


def shape_of(t: tl.tensor) -> tuple[int, ...]:
    return tuple(getattr(d, "value", d) for d in t.shape)  # block dims are tl.constexpr


def to_torch(t: tl.tensor) -> torch.Tensor:
    """The values of `t` (sharing memory); a scalar comes as a 1-element tensor."""
    data = torch.from_numpy(np.ascontiguousarray(t.handle.data))
    return data.view(torch.bfloat16) if t.dtype.scalar == tl.bfloat16 else data


def from_torch(x: torch.Tensor, shape: tuple[int, ...]) -> tl.tensor:
    """An interpreter tensor of `shape` (() for a scalar) holding `x`, broadcast to it."""
    x = x.expand(shape if shape else (1,)).contiguous()
    dtype = _TORCH_TO_TL[x.dtype]
    data = x.view(torch.uint16) if x.dtype == torch.bfloat16 else x
    ty = tl.block_type(dtype, list(shape)) if shape else dtype
    return tl.tensor(TensorHandle(data.numpy(), dtype), ty)
