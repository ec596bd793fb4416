"""Row softmax, one program per row (the fused-softmax pattern of Triton's tutorials, written here).

A standalone Triton kernel file (docs/inputs.md): kernels, a launcher `launch`, get_inputs()
and a float64 `reference`. Small size for CPU-mode CI; softmax_large.py is the realistic one.
"""
import torch
import triton
import triton.language as tl

ROWS, COLS = 8192, 4096  # realistic size (the small file is softmax.py)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


def launch(x):
    rows, cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    num_warps = 4 if block <= 2048 else 8
    softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK_SIZE=block, num_warps=num_warps)
    return y


def reference(x):
    return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]
