"""Sum over a long row (16384 elements): a looped reduction rather than a persistent one."""
import torch
import torch.nn as nn

ROWS, COLS = 32, 16384


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
