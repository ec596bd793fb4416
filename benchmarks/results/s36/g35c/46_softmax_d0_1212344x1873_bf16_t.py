"""softmax over dim 0 (outer) of a 2-D tensor; input 1212344x1873 bfloat16, transposed.

Problem 46 (family softmax) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (1212344, 1873)
DTYPE = torch.bfloat16
LAYOUT = 'transposed'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
SMALL = dict(SHAPE=(296, 235))  # tests shrink to this for a quick CPU run


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
