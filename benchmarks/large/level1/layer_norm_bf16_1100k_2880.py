"""nn.LayerNorm over the last dim in bf16: 1100000 tokens x 2880 features.

Large tier (benchmarks/large): every input is 4-9 GB (here 6.3 GB in, 6.3 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Weight and bias are bf16, seeded,
non-trivial; inputs are made in bf16 directly (no fp32 copy of the full tensor).
"""
import torch
import torch.nn as nn

SHAPE = (1100000, 2880)
EPS = 1e-5
DTYPE = torch.bfloat16
SMALL = dict(SHAPE=(16, 288))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        torch.manual_seed(0)
        self.norm = nn.LayerNorm(n, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1 + 0.1 * torch.randn(n))
            self.norm.bias.copy_(0.1 * torch.randn(n))
        self.norm.to(DTYPE)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE, dtype=DTYPE)]


def get_init_inputs():
    return [SHAPE[-1], EPS]
