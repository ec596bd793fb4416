"""LayerNorm over 2048 features, 16384 tokens, bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (16384, 2048)
SMALL = dict(SHAPE=(16, 2048))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n).to(torch.bfloat16)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE).to(torch.bfloat16)]


def get_init_inputs():
    return [SHAPE[-1]]
