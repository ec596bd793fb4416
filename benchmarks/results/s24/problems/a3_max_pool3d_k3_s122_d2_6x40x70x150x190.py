"""max_pool3d kernel 3, stride (1, 2, 2), padding 1, dilation 2 over 6x40x70x150x190 fp32 (1.9 GB in)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (6, 40, 70, 150, 190)
SMALL = dict(SHAPE=(2, 3, 9, 11, 13))


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool3d(x, kernel_size=3, stride=(1, 2, 2), padding=1, dilation=2)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
