"""Exclusive cumprod over dim 0 (an outer axis: rows 24 elements apart), bf16, as cumprod / x: Inductor's split
scan with one column a program (a scaled-down test fixture)."""
import torch
import torch.nn as nn

SHAPE = (1100, 24)


class Model(nn.Module):
    def forward(self, a):
        return torch.cumprod(a, dim=0) / a


def get_inputs():
    return [(torch.randn(SHAPE, dtype=torch.bfloat16) * (0.5 / SHAPE[0] ** 0.5)).exp()]


def get_init_inputs():
    return []
