"""avg_pool2d 3x3 stride 1 pad 1 on 16x64x128x128 fp32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (16, 64, 128, 128)
SMALL = dict(SHAPE=(16, 16, 16, 16))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.avg_pool2d(x, 3, stride=1, padding=1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
