"""Volumetric segmentation block: Conv3d 3x3x3 (32 -> 64) + GroupNorm(8) + LeakyReLU(0.01), fp32.

4x32x16x64x64 volumes in (34 MB), 4x64x16x64x64 out (67 MB), as in 3D medical-imaging UNets. cuDNN
does the convolution; the group statistics and the normalize+activation pass are Triton.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN_CH, OUT_CH, DEPTH, HW, GROUPS = 4, 32, 64, 16, 64, 8
SMALL = dict(BATCH=2, IN_CH=4, OUT_CH=8, DEPTH=3, HW=5, GROUPS=2)


class Model(nn.Module):
    def __init__(self, in_ch, out_ch, groups):
        super().__init__()
        self.conv = nn.Conv3d(in_ch, out_ch, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_ch)

    def forward(self, x):
        return F.leaky_relu(self.norm(self.conv(x)), 0.01)


def get_inputs():
    return [torch.randn(BATCH, IN_CH, DEPTH, HW, HW)]


def get_init_inputs():
    return [IN_CH, OUT_CH, GROUPS]
