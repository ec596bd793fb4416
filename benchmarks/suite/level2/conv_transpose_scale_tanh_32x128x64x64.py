"""Decoder upsampling head: ConvTranspose2d 4x4 stride 2 (128 -> 64) + per-channel scale + tanh, fp32.

32x128x64x64 in, 32x64x128x128 out (134 MB), as in the last stages of an image generator. cuDNN does
the transposed convolution; the bias, the learned per-channel scale and tanh are a Triton epilogue.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CH, OUT_CH, HW = 32, 128, 64, 64
SMALL = dict(BATCH=2, IN_CH=8, OUT_CH=4, HW=6)


class Model(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, out_ch, 4, stride=2, padding=1)
        self.gain = nn.Parameter(torch.rand(out_ch, 1, 1) + 0.5)

    def forward(self, x):
        return torch.tanh(self.up(x) * self.gain)


def get_inputs():
    return [torch.randn(BATCH, IN_CH, HW, HW)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
