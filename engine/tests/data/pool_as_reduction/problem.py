"""max_pool2d, kernel_size=5, stride=[1, 3], padding=[0, 1], ceil_mode=False, dilation=2; input 32x41x821x1024 bfloat16, contiguous.

Problem 28 (family pools) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 25001 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 41, 821, 1024)
DTYPE = torch.bfloat16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
KERNEL_SIZE = 5
STRIDE = (1, 3)
PADDING = (0, 1)
CEIL_MODE = False
DILATION = 2
SMALL = dict(SHAPE=(16, 23, 17, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return F.max_pool2d(a, KERNEL_SIZE, stride=STRIDE, padding=PADDING, dilation=DILATION, ceil_mode=CEIL_MODE)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
