"""avg_pool2d 2x2 stride 2 on a channels-last input."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, HEIGHT, WIDTH = 2, 16, 20, 22


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, kernel_size=2, stride=2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH).to(memory_format=torch.channels_last)]


def get_init_inputs():
    return []
