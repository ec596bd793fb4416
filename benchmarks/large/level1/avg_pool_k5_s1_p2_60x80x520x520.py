"""avg_pool2d with a 5x5 window, stride 1, padding 2 (count_include_pad) over 60x80x520x520 fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 5.2 GB in, 5.2 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). 5x5 is the largest overlapping
window Inductor lowers to Triton (above 25 elements with stride != kernel it calls the aten kernel),
so each output reads 25 inputs that its neighbours share.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (60, 80, 520, 520)
KERNEL, STRIDE, PADDING = 5, 1, 2
SMALL = dict(SHAPE=(2, 4, 20, 20))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, KERNEL, stride=STRIDE, padding=PADDING)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
