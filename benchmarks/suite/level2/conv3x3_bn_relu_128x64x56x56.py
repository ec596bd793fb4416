"""ResNet stem-stage unit: Conv2d 3x3 (64 -> 64) + BatchNorm (inference statistics) + ReLU on 128x64x56x56, fp32.

The convolution runs in cuDNN; the BatchNorm affine transform and the ReLU are one Triton pointwise
epilogue over the 100 MB output.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW = 128, 64, 56
SMALL = dict(BATCH=2, CH=8, HW=10)


def _randomize_bn(bn):
    # Non-trivial running statistics so the normalization is not an identity.
    with torch.no_grad():
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)


class Model(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(ch)
        _randomize_bn(self.bn)
        self.eval()

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW)]


def get_init_inputs():
    return [CH]
