"""GroupNorm(32 groups, 320 channels, affine) over 16 images of 480x480, fp32 (a diffusion UNet's
first stage at high resolution).

Large tier (benchmarks/large): every input is 4-9 GB (here 4.7 GB in, 4.7 GB out), sized for the
worker's memory plan of issue "real sizes" on one H200 (141 GB). Each group is 10 channels x 480 x 480
(2.3 M elements, 9.2 MB); the per-channel weight and bias are seeded, non-trivial.
"""
import torch
import torch.nn as nn

SHAPE = (16, 320, 480, 480)
GROUPS = 32
EPS = 1e-5
SMALL = dict(SHAPE=(2, 64, 6, 6))  # tests shrink to this for a quick CPU run


class Model(nn.Module):
    def __init__(self, groups, channels, eps):
        super().__init__()
        torch.manual_seed(0)
        self.norm = nn.GroupNorm(groups, channels, eps=eps, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1 + 0.1 * torch.randn(channels))
            self.norm.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(SHAPE)]


def get_init_inputs():
    return [GROUPS, SHAPE[1], EPS]
