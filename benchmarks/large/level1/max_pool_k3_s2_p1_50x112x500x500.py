"""max_pool2d 3x3, stride 2, padding 1 (a ResNet stem pool) over 50x112x500x500 fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 5.6 GB in, 1.4 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (50, 112, 500, 500)
KERNEL, STRIDE, PADDING = 3, 2, 1
SMALL = dict(SHAPE=(2, 4, 20, 20))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, KERNEL, stride=STRIDE, padding=PADDING)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
