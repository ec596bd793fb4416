"""Exclusive cumsum over a 1-D bf16 tensor whose length (20011, a prime) no block divides: Inductor's split scan
masks the row (`r0_index < r0_numel`) and the scan_split template must keep that mask per chunk."""
import torch
import torch.nn as nn

N = 20011


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=0) - x


def get_inputs():
    return [torch.randn(N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
