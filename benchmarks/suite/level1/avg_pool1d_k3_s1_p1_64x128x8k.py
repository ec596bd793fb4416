"""avg_pool1d kernel 3 stride 1 padding 1 over 64x128x8192 fp32 (a smoothing layer)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (64, 128, 8192)
SMALL = dict(SHAPE=(2, 4, 64))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.avg_pool1d(x, 3, stride=1, padding=1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
