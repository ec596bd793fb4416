"""Diffusion UNet residual-block entry: Conv2d 3x3 (320 -> 320) + GroupNorm(32) + SiLU on 16x320x64x64, bf16.

Latent-diffusion UNets run this at their first resolution. cuDNN does the convolution; the group
statistics and the normalize+SiLU pass are Triton reductions and pointwise kernels.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW, GROUPS = 16, 320, 64, 32
SMALL = dict(BATCH=2, CH=16, HW=8, GROUPS=4)


class Model(nn.Module):
    def __init__(self, ch, groups):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.norm = nn.GroupNorm(groups, ch)
        self.to(torch.bfloat16)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW).to(torch.bfloat16)]


def get_init_inputs():
    return [CH, GROUPS]
