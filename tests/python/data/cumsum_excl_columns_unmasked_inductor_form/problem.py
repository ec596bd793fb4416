"""Exclusive cumsum over dim 0 (an outer axis: rows 24 elements apart), bf16, as cumsum - x: Inductor's split scan
with one column a program and, the row count a multiple of every block, its loads and stores unmasked (a
scaled-down test fixture). 24 columns fill no tile of 16, 32 or 64 columns: such tiles must mask the columns past
the last."""
import torch
import torch.nn as nn

SHAPE = (1024, 24)


class Model(nn.Module):
    def forward(self, a):
        return torch.cumsum(a, dim=0) - a


def get_inputs():
    return [torch.randn(SHAPE, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
