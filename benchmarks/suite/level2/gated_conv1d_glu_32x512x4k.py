"""Gated convolutional sequence layer: Conv1d k=3 (512 -> 1024) + GLU over channels + scaled residual, fp32.

32 sequences of 4096 steps with 512 channels (268 MB), as in convolutional speech and language
encoders. cuDNN does the convolution; the GLU halves, the sigmoid gate and the residual are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, STEPS = 32, 512, 4096
SMALL = dict(BATCH=2, CH=8, STEPS=20)


class Model(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv1d(ch, 2 * ch, 3, padding=1)

    def forward(self, x):
        return (x + F.glu(self.conv(x), dim=1)) * 0.5**0.5


def get_inputs():
    return [torch.randn(BATCH, CH, STEPS)]


def get_init_inputs():
    return [CH]
