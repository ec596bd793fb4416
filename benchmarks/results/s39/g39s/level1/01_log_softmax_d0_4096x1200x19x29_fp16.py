"""log_softmax over dim 0 (outer) of a 4-D tensor; input 4096x1200x19x29 float16, contiguous.

Problem 1 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 39207 --n 8 --families softmax

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (4096, 1200, 19, 29)
DTYPE = torch.float16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
SMALL = dict(SHAPE=(16, 16, 19, 17))  # tests shrink to this for a quick CPU run


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
