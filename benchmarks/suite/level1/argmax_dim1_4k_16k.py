"""argmax over the last dim of 4096x16384 fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (4096, 16384)
SMALL = dict(SHAPE=(16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.argmax(x, dim=-1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
