"""LayerNorm over 2048 features, 16384 tokens, bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n).to(torch.bfloat16)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(16384, 2048).to(torch.bfloat16)]


def get_init_inputs():
    return [2048]
