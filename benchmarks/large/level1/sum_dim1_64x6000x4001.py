"""sum over the middle dim of a 64 x 6000 x 4001 fp32 tensor (odd last extent, unaligned rows).

Large tier (benchmarks/large): every input is 4-9 GB (here 6.1 GB in, 1 MB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Only 64 x 4001 outputs, so a kernel
that gives each output one program under-fills the GPU unless it splits the 6000-long reduction.
"""
import torch
import torch.nn as nn

SHAPE = (64, 6000, 4001)
DIM = 1
SMALL = dict(SHAPE=(3, 60, 41))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=DIM)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
