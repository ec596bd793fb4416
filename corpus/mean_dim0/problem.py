"""Mean over dim 0 of a 2-D tensor: a reduction along the strided (non-contiguous) axis."""
import torch
import torch.nn as nn

ROWS, COLS = 256, 256


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=0)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
