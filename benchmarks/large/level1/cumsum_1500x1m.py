"""cumsum along very long rows: 1500 rows of 1000000 fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 6.0 GB in, 6.0 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). A 4 MB row is a scan far longer than
one block: the carry must cross blocks (a loop with a running total, or a decoupled look-back).
"""
import torch
import torch.nn as nn

SHAPE = (1500, 1000000)
SMALL = dict(SHAPE=(8, 1000))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
