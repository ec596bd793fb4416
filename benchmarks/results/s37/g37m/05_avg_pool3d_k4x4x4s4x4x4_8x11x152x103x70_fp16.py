"""avg_pool3d, kernel_size=4, stride=4, padding=[0, 1, 2], ceil_mode=False, count_include_pad=True; input 8x11x152x103x70 float16, contiguous.

Problem 5 (family pools) of a draw, not chosen by hand:

    python benchmarks/variants.py --seed 33811 --n 60

The draw's variants.json lists its bytes and estimated eager peak.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8, 11, 152, 103, 70)
DTYPE = torch.float16
LAYOUT = 'contiguous'  # how get_inputs lays the input out in memory
KERNEL_SIZE = 4
STRIDE = 4
PADDING = (0, 1, 2)
CEIL_MODE = False
COUNT_INCLUDE_PAD = True
SMALL = dict(SHAPE=(8, 11, 8, 13, 8))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, a):
        return F.avg_pool3d(a, KERNEL_SIZE, stride=STRIDE, padding=PADDING, count_include_pad=COUNT_INCLUDE_PAD, ceil_mode=CEIL_MODE)


def get_inputs():
    return [
        torch.randn(SHAPE, dtype=DTYPE),
    ]


def get_init_inputs():
    return []
