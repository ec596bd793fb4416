"""amax over the outermost dim of a 2000 x 997 x 1023 fp32 tensor (prime and odd inner extents).

Large tier (benchmarks/large): every input is 4-9 GB (here 8.2 GB in, 4 MB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Each output reads a column 4 MB
apart from the next row's, 2000 times: the reduction runs over the slowest axis.
"""
import torch
import torch.nn as nn

SHAPE = (2000, 997, 1023)
DIM = 0
SMALL = dict(SHAPE=(20, 9, 13))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=DIM)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
