"""sum over the middle dim of a 3-D tensor whose last extent is odd."""
import torch
import torch.nn as nn

A, B, C = 8, 37, 61


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(A, B, C)]


def get_init_inputs():
    return []
