"""log_softmax over the middle dim of a 3-D tensor (a strided reduction axis)."""
import torch
import torch.nn as nn

A, B, C = 4, 37, 53


class Model(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(A, B, C)]


def get_init_inputs():
    return []
