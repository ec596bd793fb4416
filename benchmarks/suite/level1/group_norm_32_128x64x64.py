"""GroupNorm with 32 groups on 32x128x64x64 fp32 activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 128, 64, 64)
SMALL = dict(SHAPE=(2, 128, 8, 8))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, g, c):
        super().__init__()
        self.norm = nn.GroupNorm(g, c)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return [32, SHAPE[1]]
