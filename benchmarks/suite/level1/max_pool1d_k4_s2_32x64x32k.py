"""max_pool1d kernel 4 stride 2 over 32x64x32768 fp32 (sequence models, audio front ends)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (32, 64, 32768)
SMALL = dict(SHAPE=(2, 4, 64))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.max_pool1d(x, 4, stride=2)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
