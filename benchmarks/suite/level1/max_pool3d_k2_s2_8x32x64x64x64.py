"""max_pool3d kernel 2 stride 2 on 8x32x64x64x64 fp32 (volumetric CNNs)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8, 32, 64, 64, 64)
SMALL = dict(SHAPE=(1, 2, 8, 8, 8))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.max_pool3d(x, 2, stride=2)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
