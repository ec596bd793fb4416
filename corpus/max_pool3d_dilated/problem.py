"""max_pool3d, kernel 2, stride 2, dilation 2 over odd extents."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH = 2, 3, 13, 11, 15


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool3d(x, kernel_size=2, stride=2, dilation=2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
