"""Softmax over the last dim, 512 rows of 8192 fp32 (a scaled-down test fixture of softmax_large): looped/online softmax."""
import torch
import torch.nn as nn

ROWS, COLS = 512, 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
