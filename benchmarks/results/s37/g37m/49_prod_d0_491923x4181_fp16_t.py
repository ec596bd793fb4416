"""prod over dim 0 (outer) of a 2-D tensor, keepdim=False; input 491923x4181 float16, transposed.

Problem 49 (family reductions) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (491923, 4181)
DTYPE = torch.float16
LAYOUT = 'transposed'  # how get_inputs lays the input out in memory
DIM = 0
AXIS = 'outer'
KEEPDIM = False
SMALL = dict(SHAPE=(487, 261))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return torch.prod(a, dim=DIM, keepdim=KEEPDIM)


def get_inputs():
    return [
        (torch.randn(*SHAPE[:-2], SHAPE[-1], SHAPE[-2], dtype=DTYPE) * (0.5 / SHAPE[0] ** 0.5)).exp().transpose(-2, -1),
    ]


def get_init_inputs():
    return []
