"""argmin over dim 1 of a 200 x 2999 x 2500 fp32 tensor, uniform inputs in [0, 1).

Large tier (benchmarks/large): every input is 4-9 GB (here 6.0 GB in, 4 MB of int64 out), sized for
the worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn

SHAPE = (200, 2999, 2500)
DIM = 1
SMALL = dict(SHAPE=(3, 29, 25))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.argmin(x, dim=DIM)


def get_inputs():
    return [torch.rand(SHAPE)]


def get_init_inputs():
    return []
