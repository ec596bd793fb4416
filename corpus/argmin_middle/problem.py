"""argmin over the middle dim of a 3-D tensor (index output, odd extents)."""
import torch
import torch.nn as nn

A, B, C = 6, 41, 35


class Model(nn.Module):
    def forward(self, x):
        return torch.argmin(x, dim=1)


def get_inputs():
    return [torch.randn(A, B, C)]


def get_init_inputs():
    return []
