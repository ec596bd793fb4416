"""Plain matrix multiply of two inputs (extern mm, or a Triton template under max-autotune)."""
import torch
import torch.nn as nn

M, K, N = 256, 128, 256


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
