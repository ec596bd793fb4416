"""softmax over dim 1 (middle) of a 3-D tensor; input 37x5003x7919 bfloat16, contiguous (fresh shape)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (37, 5003, 7919)
DTYPE = torch.bfloat16
SMALL = dict(SHAPE=(3, 41, 37))


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a):
        return F.softmax(a, dim=1)


def get_inputs():
    return [torch.randn(SHAPE, dtype=DTYPE)]


def get_init_inputs():
    return []
