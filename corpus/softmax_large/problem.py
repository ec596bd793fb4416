"""Softmax over the last dim at a realistic size (8192 x 8192 fp32, 256 MiB): looped/online softmax."""
import torch
import torch.nn as nn

ROWS, COLS = 8192, 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
