"""max_pool2d 4x4 stride 1 on 16x32x256x256 fp32 (large overlapping windows)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (16, 32, 256, 256)
SMALL = dict(SHAPE=(16, 16, 16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.max_pool2d(x, 4, stride=1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
