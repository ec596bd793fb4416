"""amin over the middle dim of a 1024 x 1999 x 997 fp32 tensor (prime extents, unaligned rows).

Large tier (benchmarks/large): every input is 4-9 GB (here 8.2 GB in, 4 MB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn

SHAPE = (1024, 1999, 997)
DIM = 1
SMALL = dict(SHAPE=(4, 19, 13))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.amin(x, dim=DIM)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
