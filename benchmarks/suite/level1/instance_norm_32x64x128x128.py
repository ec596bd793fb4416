"""InstanceNorm2d on 32x64x128x128 fp32 activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 64, 128, 128)
SMALL = dict(SHAPE=(2, 64, 8, 8))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.InstanceNorm2d(c)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return [SHAPE[1]]
