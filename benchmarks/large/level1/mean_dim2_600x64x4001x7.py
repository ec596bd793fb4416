"""mean over dim 2 of a 600 x 64 x 4001 x 7 fp32 tensor (a short contiguous extent after the reduced one).

Large tier (benchmarks/large): every input is 4-9 GB (here 4.3 GB in, 1 MB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). The reduced index has stride 7, so a
tile of consecutive outputs holds groups of 7 adjacent values 112 KB apart.
"""
import torch
import torch.nn as nn

SHAPE = (600, 64, 4001, 7)
DIM = 2
SMALL = dict(SHAPE=(3, 4, 41, 7))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.mean(x, dim=DIM)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
