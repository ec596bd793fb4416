"""Transformer MLP up-projection: Linear(4096 -> 16384) with bias, then tanh-GELU, 16384 tokens, bf16.

cuBLAS does the GEMM; Inductor fuses the bias add and the GELU into one Triton epilogue over the
16384x16384 activation (512 MB in bf16).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# Sizes; tests shrink them to SMALL for a quick CPU forward.
TOKENS, DIM, HIDDEN = 16384, 4096, 16384
SMALL = dict(TOKENS=64, DIM=32, HIDDEN=128)


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.up = nn.Linear(dim, hidden).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.up(x), approximate="tanh")


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, HIDDEN]
