"""log_softmax over dim 2 (middle) of a 4-D tensor; input 67x541x1024x67 bfloat16, contiguous.

Problem 2 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 39207 --n 8 --families softmax

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (67, 541, 1024, 67)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 2
AXIS = 'middle'
SMALL = dict(SHAPE=(19, 19, 16, 19))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return F.log_softmax(a, dim=DIM)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
