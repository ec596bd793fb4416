"""Inclusive cumsum along very long rows (2 x 64K fp32, a scaled-down test fixture): Inductor's split_scan territory."""
import torch
import torch.nn as nn

ROWS, COLS = 2, 1 << 16


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
