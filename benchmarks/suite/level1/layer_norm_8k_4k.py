"""LayerNorm over 4096 features, 8192 tokens, fp32, with affine weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return [4096]
