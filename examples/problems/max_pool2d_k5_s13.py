"""max_pool2d with a 5x5 window and stride (1, 3): 25 window elements, the form Inductor writes as a reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, HEIGHT, WIDTH = 2, 3, 23, 41


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=5, stride=(1, 3))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
