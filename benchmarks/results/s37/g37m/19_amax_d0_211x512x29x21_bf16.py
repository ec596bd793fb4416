"""amax over dim 0 (outer) of a 4-D tensor, keepdim=False; input 211x512x29x21 bfloat16, contiguous.

Problem 19 (family reductions) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (211, 512, 29, 21)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
KEEPDIM = False
SMALL = dict(SHAPE=(17, 16, 17, 21))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.amax(a, dim=DIM, keepdim=KEEPDIM)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
