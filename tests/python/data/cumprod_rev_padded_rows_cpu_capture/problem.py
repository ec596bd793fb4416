"""reversed cumprod over dim 2 of a 3-D tensor; input 197x2448x2161 bfloat16, transposed.

Problem 18 (family scans) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 32606 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (3, 5, 1061)
DTYPE = torch.bfloat16
LAYOUT = 'transposed'  # how get_inputs lays the input out in memory
DIM = 2
AXIS = 'inner'
FORM = 'reversed'
SMALL = dict(SHAPE=(53, 40, 37))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.cumprod(a.flip(DIM), dim=DIM).flip(DIM)


def get_inputs():
    return [
        (torch.randn(*SHAPE[:-2], SHAPE[-1], SHAPE[-2], dtype=DTYPE) * (0.5 / SHAPE[2] ** 0.5)).exp().transpose(-2, -1),
    ]


def get_init_inputs():
    return []
