"""argmin over dim 1 (middle) of a 3-D tensor, keepdim=False; input 257x464x515 bfloat16, contiguous.

Problem 47 (family arg_reductions) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (257, 464, 515)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 1
AXIS = 'middle'
KEEPDIM = False
SMALL = dict(SHAPE=(37, 56, 33))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.argmin(a, dim=DIM, keepdim=KEEPDIM)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
