"""Row L2 normalize, F.normalize(x, p=2, dim=1), of 24000 x 65000 fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 6.2 GB in, 6.2 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (24000, 65000)
SMALL = dict(SHAPE=(16, 650))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.normalize(x, p=2, dim=1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
