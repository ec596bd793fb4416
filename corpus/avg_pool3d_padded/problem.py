"""avg_pool3d, kernel 3, stride 2, padding 1 over odd extents."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH = 2, 3, 11, 13, 9


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool3d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
