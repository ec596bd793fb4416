"""Exclusive cumsum over dim 1 of an fp16 tensor stored transposed (rows 24 elements apart in memory), as
cumsum - x, written contiguous: Inductor's split scan with one column a program, loads strided and stores
contiguous (a scaled-down test fixture of a fresh draw's row, 1000 x 588663 on an H100)."""
import torch
import torch.nn as nn

SHAPE = (24, 1100)


class Model(nn.Module):
    def forward(self, a):
        return torch.cumsum(a, dim=1) - a


def get_inputs():
    return [torch.randn(SHAPE[1], SHAPE[0], dtype=torch.float16).transpose(0, 1)]


def get_init_inputs():
    return []
