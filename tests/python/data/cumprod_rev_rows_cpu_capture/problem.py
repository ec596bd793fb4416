"""A reversed cumprod along rows of 8192 (flip, cumprod, flip), captured on the CPU with Triton kernels: Inductor's
looped scan over the flipped rows and a flip kernel, one region (a test fixture for G2's order probe)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return torch.flip(torch.cumprod(torch.flip(a, [1]), 1), [1])


def get_inputs():
    return [1.0 + 0.01 * torch.randn(16, 8192)]


def get_init_inputs():
    return []
