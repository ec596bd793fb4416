"""Reversed cumulative sum (flip, cumsum, flip): a scan with reversed indexing."""
import torch
import torch.nn as nn

ROWS, COLS = 64, 1024


class Model(nn.Module):
    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
