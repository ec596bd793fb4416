"""avg_pool2d kernel 3, stride 2, padding 1, padding not counted, over 64x64x383x383 fp32 (2.4 GB in:
odd extents, so the divisor varies along both edges)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (64, 64, 383, 383)
SMALL = dict(SHAPE=(2, 4, 23, 23))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, kernel_size=3, stride=2, padding=1, count_include_pad=False)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
