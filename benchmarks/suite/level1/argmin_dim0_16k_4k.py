"""argmin over dim 0 (strided) of 16384x4096 fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (16384, 4096)
SMALL = dict(SHAPE=(16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.argmin(x, dim=0)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
