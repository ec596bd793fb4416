"""max_pool3d kernel 3, stride 2, padding 1 over 8x48x64x112x112 fp32 (1.2 GB in: video / volumetric
stems)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8, 48, 64, 112, 112)
SMALL = dict(SHAPE=(2, 3, 9, 11, 13))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool3d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
