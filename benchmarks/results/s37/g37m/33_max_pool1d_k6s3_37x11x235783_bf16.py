"""max_pool1d, kernel_size=6, stride=3, padding=0, ceil_mode=True, dilation=1; input 37x11x235783 bfloat16, contiguous.

Problem 33 (family pools) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (37, 11, 235783)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
KERNEL_SIZE = 6
STRIDE = 3
PADDING = 0
CEIL_MODE = True
DILATION = 1
SMALL = dict(SHAPE=(37, 11, 239))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return F.max_pool1d(a, KERNEL_SIZE, stride=STRIDE, padding=PADDING, dilation=DILATION, ceil_mode=CEIL_MODE)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
