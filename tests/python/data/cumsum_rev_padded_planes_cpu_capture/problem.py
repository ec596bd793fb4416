"""reversed cumsum over dim 2 of a 3-D tensor; input 496x1184x431 float16, contiguous.

Problem 50 (family scans) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 32606 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (3, 40, 431)
DTYPE = torch.float16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 2
AXIS = 'inner'
FORM = 'reversed'
SMALL = dict(SHAPE=(64, 32, 53))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.cumsum(a.flip(DIM), dim=DIM).flip(DIM)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
