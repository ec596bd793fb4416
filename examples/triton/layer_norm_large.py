"""Layer norm forward over the last dimension with weight and bias: one program per row, statistics
in one pass over the row, then normalize and write (a standalone Triton kernel file, docs/inputs.md)."""
import torch
import triton
import triton.language as tl

ROWS, COLS = 8192, 4096  # realistic size (the small file is layer_norm.py)
EPS = 1e-5


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, diff * rstd * w + b, mask=mask)


def launch(x, weight, bias):
    rows, cols = x.shape
    y = torch.empty_like(x)
    layer_norm_kernel[(rows,)](x, weight, bias, y, x.stride(0), cols, EPS, BLOCK=triton.next_power_of_2(cols))
    return y


def reference(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.rand(COLS) + 0.5, torch.randn(COLS)]
