"""An exclusive cumsum (`cumsum(a, 0) - a`) over dim 0 of a 4-D fp32 tensor whose last two dims are stored
transposed, captured on the CPU with Triton kernels: a scan in the input's layout writes buf0, then a 2-D tiled
kernel reads buf0 and the input again and stores in the output's layout (a test fixture for the epilogue)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return torch.cumsum(a, dim=0) - a


def get_inputs():
    return [torch.randn(11, 16, 21, 16).transpose(-2, -1)]


def get_init_inputs():
    return []
