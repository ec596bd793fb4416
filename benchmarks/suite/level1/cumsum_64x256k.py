"""cumsum along 262144 elements, 64 rows, fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (64, 262144)
SMALL = dict(SHAPE=(16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
