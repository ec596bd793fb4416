"""reversed cumprod over the last dim of a transposed bf16 tensor (a looped scan whose input walks x)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return torch.cumprod(a.flip(2), dim=2).flip(2)


def get_inputs():
    return [(torch.rand(3, 1100, 40) * 0.2 + 0.9).to(torch.bfloat16).transpose(-2, -1)]


def get_init_inputs():
    return []
