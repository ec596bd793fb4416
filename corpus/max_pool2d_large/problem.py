"""max_pool2d 3x3 stride 2 pad 1 at an ImageNet-stem size (32 x 64 x 224 x 224 fp32)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CHANNELS, HEIGHT, WIDTH = 32, 64, 224, 224


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
