"""log_softmax over dim 1 (inner) of a 2-D tensor; input 3459x281797 float32, contiguous.

Problem 4 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 39207 --n 8 --families softmax

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (3459, 281797)
DTYPE = torch.float32
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
DIM = 1
AXIS = 'inner'
SMALL = dict(SHAPE=(216, 281))  # tests shrink to this for a quick CPU run


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
