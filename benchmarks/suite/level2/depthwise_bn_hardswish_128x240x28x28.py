"""Mobile-network depthwise stage: depthwise Conv2d 5x5 (240 channels) + BatchNorm (inference) + hardswish, fp32.

128x240x28x28 (96 MB), as in the middle of a MobileNetV3. The depthwise convolution runs in cuDNN; the
BatchNorm and hardswish are a Triton epilogue.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CH, HW = 128, 240, 28
SMALL = dict(BATCH=2, CH=8, HW=7)


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
        self.dw = nn.Conv2d(ch, ch, 5, padding=2, groups=ch, bias=False)
        self.bn = nn.BatchNorm2d(ch)
        _randomize_bn(self.bn)
        self.eval()

    def forward(self, x):
        return F.hardswish(self.bn(self.dw(x)))


def get_inputs():
    return [torch.randn(BATCH, CH, HW, HW)]


def get_init_inputs():
    return [CH]
