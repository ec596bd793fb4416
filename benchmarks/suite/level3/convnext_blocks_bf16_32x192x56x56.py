"""Two ConvNeXt blocks: depthwise 7x7 conv, channels-last LayerNorm, Linear 4x + GELU + Linear, layer scale, residual, bf16.

32 images, 192 channels at 56x56 (37 MB per activation in bf16, 147 MB for the 4x expansion). The
depthwise convolution is cuDNN and the pointwise Linears are cuBLAS GEMMs; the permutes, LayerNorm,
GELU, layer scale and residual are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW, BLOCKS = 32, 192, 56, 2
SMALL = dict(BATCH=2, CH=8, HW=9, BLOCKS=2)


class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.dw = nn.Conv2d(ch, ch, 7, padding=3, groups=ch)
        self.norm = nn.LayerNorm(ch, eps=1e-6)
        self.fc1 = nn.Linear(ch, 4 * ch)
        self.fc2 = nn.Linear(4 * ch, ch)
        self.gamma = nn.Parameter(torch.full((ch,), 0.1) + 0.05 * torch.rand(ch))

    def forward(self, x):
        h = self.dw(x).permute(0, 2, 3, 1)  # to channels-last for the norm and the MLP
        h = self.gamma * self.fc2(F.gelu(self.fc1(self.norm(h))))
        return x + h.permute(0, 3, 1, 2)


class Model(nn.Module):
    def __init__(self, ch, blocks):
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.Sequential(*[Block(ch) for _ in range(blocks)])
        self.to(torch.bfloat16)

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW).to(torch.bfloat16)]


def get_init_inputs():
    return [CH, BLOCKS]
