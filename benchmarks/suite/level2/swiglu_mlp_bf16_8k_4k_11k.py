"""LLaMA-style SwiGLU feed-forward: W_down(silu(W_gate x) * W_up x), 8192 tokens, 4096 -> 11008 -> 4096, bf16.

Three cuBLAS GEMMs; the SiLU gate and the product are one Triton pointwise kernel over two
8192x11008 activations (172 MB each).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, DIM, HIDDEN = 8192, 4096, 11008
SMALL = dict(TOKENS=32, DIM=32, HIDDEN=88)


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.to(torch.bfloat16)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(TOKENS, DIM).to(torch.bfloat16)]


def get_init_inputs():
    return [DIM, HIDDEN]
