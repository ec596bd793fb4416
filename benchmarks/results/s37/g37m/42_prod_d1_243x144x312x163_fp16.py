"""prod over dim 1 (middle) of a 4-D tensor, keepdim=False; input 243x144x312x163 float16, contiguous.

Problem 42 (family reductions) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (243, 144, 312, 163)
DTYPE = torch.float16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 1
AXIS = 'middle'
KEEPDIM = False
SMALL = dict(SHAPE=(15, 16, 16, 23))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.prod(a, dim=DIM, keepdim=KEEPDIM)


def get_inputs():
    return [
        (torch.randn(SHAPE, dtype=DTYPE) * (0.5 / SHAPE[1] ** 0.5)).exp(),
    ]


def get_init_inputs():
    return []
