"""min over dim 0 (strided) of 8192x8192 fp32 (values only)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return torch.amin(x, dim=0)


def get_inputs():
    return [torch.randn(8192, 8192)]


def get_init_inputs():
    return []
