"""argmax over the middle dim of a 96 x 5000 x 3001 fp32 tensor (a strided column reduction per batch).

Large tier (benchmarks/large): every input is 4-9 GB (here 5.8 GB in, 2.3 MB of int64 out), sized for
the worker's memory plan of issue "real sizes" on one H200 (141 GB). The odd last extent (3001) leaves
every row unaligned.
"""
import torch
import torch.nn as nn

SHAPE = (96, 5000, 3001)
DIM = 1
SMALL = dict(SHAPE=(3, 50, 31))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.argmax(x, dim=DIM)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
