"""exclusive cumsum over dim 0 of a 2-D tensor; input 524288x3527 bfloat16, contiguous.

Problem 38 (family scans) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 32606 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (524288, 3527)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
FORM = 'exclusive'
SMALL = dict(SHAPE=(256, 457))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.cumsum(a, dim=DIM) - a


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
