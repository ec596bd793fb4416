"""Pre-norm MLP entry: Linear(LayerNorm(x)) with 2048 -> 8192, 16384 tokens, bf16.

The LayerNorm is a Triton prologue kernel feeding a cuBLAS GEMM; the bias is added in the GEMM or
in a Triton epilogue, as Inductor chooses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, HIDDEN = 16384, 2048, 8192
SMALL = dict(TOKENS=32, DIM=32, HIDDEN=64)


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, hidden)
        self.to(torch.bfloat16)

    def forward(self, x):
        return self.fc(self.norm(x))


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, HIDDEN]
