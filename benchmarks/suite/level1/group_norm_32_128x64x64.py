"""GroupNorm with 32 groups on 32x128x64x64 fp32 activations."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, g, c):
        super().__init__()
        self.norm = nn.GroupNorm(g, c)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(32, 128, 64, 64)]


def get_init_inputs():
    return [32, 128]
