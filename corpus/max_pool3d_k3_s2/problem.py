"""max_pool3d with a 3x3x3 window, stride 2, padding 1: 27 window elements."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH = 2, 3, 9, 13, 11


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool3d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
