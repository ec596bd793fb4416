"""Mean-centering of two tensors of different lengths with one kernel: out = x - mean(x), the mean taken
over the n elements each launch is given (a standalone Triton kernel file whose one kernel runs at two
shapes, docs/inputs.md)."""
import torch
import triton
import triton.language as tl

LONG, SHORT = 3000, 1234


@triton.jit
def center_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    mean = tl.sum(acc, axis=0) / n
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + offs, x - mean, mask=offs < n)


def launch(a, b):
    out_a = torch.empty_like(a)
    out_b = torch.empty_like(b)
    center_kernel[(1,)](a, out_a, a.numel(), BLOCK=1024)
    center_kernel[(1,)](b, out_b, b.numel(), BLOCK=1024)
    return out_a, out_b


def reference(a, b):
    return a - a.mean(), b - b.mean()


def get_inputs():
    return [torch.rand(LONG) * 4, torch.rand(SHORT) * 4]
