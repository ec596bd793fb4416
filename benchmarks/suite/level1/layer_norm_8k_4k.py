"""LayerNorm over 4096 features, 8192 tokens, fp32, with affine weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (8192, 4096)
SMALL = dict(SHAPE=(16, 4096))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return [SHAPE[-1]]
