"""Inclusive cumsum along very long rows (4 x 2M fp32): Inductor's split_scan territory."""
import torch
import torch.nn as nn

ROWS, COLS = 4, 1 << 21


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
