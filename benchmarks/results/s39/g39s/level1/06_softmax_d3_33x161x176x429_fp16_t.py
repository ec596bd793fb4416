"""softmax over dim 3 (inner) of a 4-D tensor; input 33x161x176x429 float16, transposed.

Problem 6 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 39207 --n 8 --families softmax

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (33, 161, 176, 429)
DTYPE = torch.float16
LAYOUT = 'transposed'  # how get_inputs lays the input out in memory
DIM = 3
AXIS = 'inner'
SMALL = dict(SHAPE=(17, 21, 24, 13))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return F.softmax(a, dim=DIM)


def get_inputs():
    return [
        torch.randn(*SHAPE[:-2], SHAPE[-1], SHAPE[-2], dtype=DTYPE).transpose(-2, -1),
    ]


def get_init_inputs():
    return []
