"""Row L1 normalize, x / sum(|x|) over dim 1, of 30000 x 50257 fp32 (GPT-2 vocabulary width).

Large tier (benchmarks/large): every input is 4-9 GB (here 6.0 GB in, 6.0 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn

SHAPE = (30000, 50257)
SMALL = dict(SHAPE=(16, 257))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return x / x.abs().sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
