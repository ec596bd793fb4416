"""log_softmax over dim 0 (outer) of a 3-D tensor; input 4096x269x669 float32, contiguous.

Problem 15 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (4096, 269, 669)
DTYPE = torch.float32
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
SMALL = dict(SHAPE=(32, 33, 41))  # tests shrink to this for a quick CPU run


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
