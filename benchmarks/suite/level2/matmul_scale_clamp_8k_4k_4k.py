"""Scaled, clamped projection: clamp((x @ W) * s + b, -c, c) with a per-column scale s, 8192x4096 @ 4096x4096, fp32.

Seen in quantization-aware layers that clip activations to a calibrated range. cuBLAS does the GEMM;
the per-column scale, shift and clamp are a Triton epilogue.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS, DIM, OUT = 8192, 4096, 4096
SMALL = dict(ROWS=32, DIM=40, OUT=24)


class Model(nn.Module):
    def __init__(self, dim, out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, out) / dim**0.5)
        self.scale = nn.Parameter(torch.rand(out) + 0.5)
        self.shift = nn.Parameter(torch.randn(out) * 0.1)
        self.limit = 1.5

    def forward(self, x):
        y = torch.matmul(x, self.weight) * self.scale + self.shift
        return torch.clamp(y, -self.limit, self.limit)


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [DIM, OUT]
