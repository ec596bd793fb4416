"""nn.LayerNorm over the last dim: 560000 tokens x 2560 features, fp32.

Large tier (benchmarks/large): every input is 4-9 GB (here 5.7 GB in, 5.7 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Weight and bias are seeded, non-trivial.
"""
import torch
import torch.nn as nn

SHAPE = (560000, 2560)
EPS = 1e-5
SMALL = dict(SHAPE=(16, 160))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        torch.manual_seed(0)
        self.norm = nn.LayerNorm(n, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1 + 0.1 * torch.randn(n))
            self.norm.bias.copy_(0.1 * torch.randn(n))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return [SHAPE[-1], EPS]
