"""Softmax over dim 0 of 2000003x96 fp32 (96 columns of 2000003, each strided across memory; 768 MB in)."""
import torch
import torch.nn as nn

SHAPE = (2000003, 96)
SMALL = dict(SHAPE=(9001, 8))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return []
