"""torch.min over a dim returning values and indices (a two-output reduction)."""
import torch
import torch.nn as nn

ROWS, COLS = 128, 512


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.min(x, dim=1)
        return values, indices


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
